import Foundation
import ParlorLoop
import Testing
@testable import ParlorMedia

/// The media loop's tick and report run only while a session is open: an idle server does not wake for them.
@Suite struct MediaServerTimerTests {
    private func timersRunning(_ server: MediaServer) -> [Bool] {
        server.onLoop { [$0.tickTimer != nil, $0.reportTimer != nil] }
    }

    @Test func timersRunFromTheFirstSessionUntilTheLastCloses() throws {
        var configuration = MediaServerConfiguration(bind: TransportAddress(host: "127.0.0.1", port: 0)!, slots: 1)
        configuration.tickInterval = .milliseconds(10)
        configuration.reportInterval = .milliseconds(20)
        let server = try MediaServer(configuration: configuration, logger: Logger(level: .off))
        try server.start(events: { _ in })
        defer { server.stop() }
        #expect(timersRunning(server) == [false, false], "timers armed before any session")

        let (_, setup) = try server.answer(offer: MediaServerAnswerTests.offer(slots: 1), session: 3, group: "RM-1", member: "MEM-1", maySend: true)
        server.open(setup)
        #expect(timersRunning(server) == [true, true], "no timers with a session open")
        // Still armed after several ticks and reports: each one re-arms while the session is there.
        let later = MonotonicClock.now() + 100_000_000
        while MonotonicClock.now() < later { usleep(10_000) }
        #expect(timersRunning(server) == [true, true], "timers stopped with a session open")

        server.close(session: setup.id)
        // The next tick and report find no session and do not re-arm (within a few intervals).
        let deadline = MonotonicClock.now() + 5_000_000_000
        while timersRunning(server) != [false, false], MonotonicClock.now() < deadline { usleep(5_000) }
        #expect(timersRunning(server) == [false, false], "timers still armed with every session closed")
    }
}

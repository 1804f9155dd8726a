import Foundation
import ParlorProtocol
@testable import ParlorRooms
import Testing

/// A burst of commands is applied in transactions of at most `RoomsService.maxCommandsPerBatch`, in order, none lost.
@Suite struct BatchLimitTests {
    @Test func aBurstIsCommittedInBoundedBatches() throws {
        let rooms = try RoomsHarness()
        defer { rooms.stop() }
        let alice = try rooms.connect("alice")
        let commits = { rooms.service.metrics.commitSeconds.snapshot().cumulative.last ?? 0 }
        let before = commits()

        // The rooms thread waits behind a gate while the whole burst queues, so its first drain finds all of it.
        // The burst starts only once the thread is inside the gate: a commit-window timer of the connect's drain could
        // otherwise fire just before the gate and take the first few pings into a fourth transaction (seen in CI).
        let gate = DispatchSemaphore(value: 0)
        let insideGate = DispatchSemaphore(value: 0)
        rooms.service.thread.execute {
            insideGate.signal()
            gate.wait()
        }
        insideGate.wait()
        let count = 2 * RoomsService.maxCommandsPerBatch + 88
        for index in 0..<count { rooms.service.handle(.ping, tid: .string("p\(index)"), from: alice) }
        gate.signal()
        rooms.sync()

        #expect(commits() - before == 3)
        let tids = rooms.channel.takeReplyTIDs(alice.id)
        #expect(tids == (0..<count).map { "p\($0)" })
    }
}

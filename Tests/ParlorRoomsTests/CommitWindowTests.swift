import Foundation
@testable import ParlorLoop
import ParlorProtocol
@testable import ParlorRooms
import Testing

/// At most one rooms transaction starts per commit window: a command after a quiet window is applied at once, and
/// what arrives within a window waits for its end and shares one transaction.
@Suite struct CommitWindowTests {
    /// Replies recorded for `client` so far, by tid (without taking them from the channel's other users).
    private func replyTIDs(_ rooms: RoomsHarness, _ client: ClientRef) -> [String] {
        rooms.channel.take(client.handle).compactMap { item -> String? in
            guard case .message(let reply, true) = item else { return nil }
            return reply["tid"]?.stringValue
        }
    }

    @Test func commandsWithinAWindowWaitForItsEndAndShareOneTransaction() throws {
        // A window far longer than the test: nothing here may wait for its timer.
        let rooms = try RoomsHarness { $0.commitWindow = .seconds(600) }
        defer { rooms.stop() }
        let commits = { rooms.service.metrics.commitSeconds.snapshot().cumulative.last ?? 0 }
        let alice = try rooms.connect("alice")  // the harness's sync applies it at once and starts a window

        let before = commits()
        for index in 0..<5 { rooms.service.handle(.ping, tid: .string("w\(index)"), from: alice) }
        // A task queued after the submits runs before the window ends: nothing has been applied yet.
        rooms.service.loop.submitAndWait {}
        #expect(replyTIDs(rooms, alice).isEmpty)
        #expect(commits() == before)

        // Applied together when the window's drain runs (here forced rather than waited for).
        rooms.sync()
        #expect(replyTIDs(rooms, alice) == (0..<5).map { "w\($0)" })
        #expect(commits() - before == 1)
    }

    @Test func aCommandAfterAQuietWindowIsAppliedAtOnce() throws {
        let rooms = try RoomsHarness { $0.commitWindow = .seconds(600) }
        defer { rooms.stop() }
        // No drain has run on this service yet, so its window is long over: the connect is applied by the drain
        // the submit queued, which a plain task queued after it follows.
        let client = ClientRef(handle: ConnectionHandle(loop: rooms.service.loop, fd: 3, registrationID: 1),
                               sessionID: Identifier.make(Identifier.session), user: try rooms.users.findOrCreate(name: "bob"))
        rooms.service.connect(client)
        rooms.service.loop.submitAndWait {}
        #expect(rooms.messages(client).map(\.type) == ["session:success"])
    }

    @Test func aWindowOfZeroNeverWaits() throws {
        let rooms = try RoomsHarness { $0.commitWindow = .milliseconds(0) }
        defer { rooms.stop() }
        let alice = try rooms.connect("alice")
        for index in 0..<3 {
            rooms.service.handle(.ping, tid: .string("z\(index)"), from: alice)
            rooms.service.loop.submitAndWait {}
            #expect(replyTIDs(rooms, alice) == ["z\(index)"])
        }
    }
}

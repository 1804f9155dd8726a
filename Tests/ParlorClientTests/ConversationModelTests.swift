import Foundation
import ParlorApp
import ParlorTesting
import Testing
@testable import ParlorClient

/// The documented ConversationModel port keeps the right participants through joins, leaves and a lost room.
@Suite struct ConversationModelTests {
    @MainActor
    @Test func participantsFollowEventsAndSurviveALostRoom() async throws {
        let (app, server) = try startServer { $0.rooms.gracePeriod = .milliseconds(100) }
        defer { app.shutdown() }
        let room = try await server.createRoom(displayName: "Model")
        let alice = try await server.session("alice")
        let bob = try await server.session("bob")
        let carol = try await server.session("carol")
        let model = ConversationModel(session: alice, roomID: room.id)
        model.listen()
        defer { model.stop() }
        await model.join()
        #expect(model.isJoined)
        #expect(model.participants.map(\.name) == ["alice"])

        _ = try await bob.join(room.id)
        _ = try await carol.join(room.id)
        try await eventually { model.participants.map(\.name) == ["alice", "bob", "carol"] }
        try await bob.leave(room.id)
        try await eventually { model.participants.map(\.name) == ["alice", "carol"] }

        // Away past the grace period: the room comes back as lost and the model joins again by itself.
        let bobEvents = EventRecorder(bob)
        _ = try await bob.join(room.id)
        let aliceMember = try #require(model.participants.first { $0.name == "alice" })
        await alice.pauseReconnects()
        await alice.simulateNetworkDrop()
        try await bobEvents.expect(.memberLeft(memberID: aliceMember.id), within: .seconds(10))
        await alice.resumeReconnects()
        try await eventually { model.isJoined && model.participants.map(\.name) == ["carol", "bob", "alice"] }
        #expect(model.participants.last?.id != aliceMember.id)
        #expect(model.lastError == nil)

        await model.leave()
        try await eventually { !model.isJoined && model.participants.isEmpty }
        for session in [alice, bob, carol] { await session.close() }
    }
}

/// Polls `condition` on the main actor until it holds, for at most `timeout`.
@MainActor
func eventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { throw TestTimeout(description: "condition not met within \(timeout)") }
        try await Task.sleep(for: .milliseconds(5))
    }
}

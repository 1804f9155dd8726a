import Foundation
import ParlorApp
import ParlorClient
import Testing

/// The live stream through ParlorClient: `setStreamPublic`, `RoomEvent.stream` (room:stream) and the join reply's
/// `Membership.stream`.
@Suite struct LiveStreamClientTests {
    @Test func theClientOpensTheStreamAndSurfacesRoomStream() async throws {
        let app = try buildApplication(AppConfiguration.testing())
        defer { app.shutdown() }
        let anonymous = ParlorServer(host: "127.0.0.1", port: app.port)
        let aliceToken = try await anonymous.auth(name: "alice").jwt
        var server = anonymous
        server.token = aliceToken
        let room = try await server.createRoom(displayName: "Radio", properties: RoomProperties(mode: .stage))
        let alice = try await server.connect(token: aliceToken)
        let bob = try await anonymous.connect(token: try await anonymous.auth(name: "bob").jwt)
        let bobEvents = bob.events
        let aliceJoin = try await alice.join(room.id)
        #expect(aliceJoin.stream == LiveStreamStatus(isPublic: false, listeners: 0), "a stage room's join reply says how its stream stands")
        _ = try await bob.join(room.id)

        let opened = try await alice.setStreamPublic(true, in: room.id)
        #expect(opened.isPublic && opened.listeners == 0)
        let event = try await firstStreamEvent(bobEvents)
        #expect(event.isPublic)
        do {
            try await bob.setStreamPublic(false, in: room.id)
            Issue.record("a listener closed the stream")
        } catch {
            #expect(error.code == ErrorCode.memberNotAllowed.rawValue)
        }
        let carol = try await anonymous.connect(token: try await anonymous.auth(name: "carol").jwt)
        #expect(try await carol.join(room.id).stream?.isPublic == true)
        for session in [alice, bob, carol] { await session.close() }
    }

    /// The next room:stream on `stream`, within 10 s.
    private func firstStreamEvent(_ stream: AsyncStream<RoomEvent>) async throws -> LiveStreamStatus {
        try await withThrowingTaskGroup(of: LiveStreamStatus?.self) { group in
            group.addTask {
                for await event in stream where event.eventType == .roomStream { return event.stream }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: .seconds(10))
                throw TestFailure("no room:stream within 10 s")
            }
            defer { group.cancelAll() }
            guard let status = try await group.next() ?? nil else { throw TestFailure("room:stream without its fields") }
            return status
        }
    }
}

import Foundation
import ParlorApp
import Testing
@testable import ParlorClient

/// ParlorClient keeps the claim secret /auth returns and sends it when it authenticates again, so it gets its own
/// identity back while it is in use; someone else's client asking for the name gets a separate identity.
@Suite struct ClaimTests {
    @Test func reauthenticatingWhileConnectedKeepsTheIdentity() async throws {
        let (app, server) = try startServer()
        defer { app.shutdown() }
        let first = try await server.auth(name: "alice")
        #expect(first.claim?.isEmpty == false)
        let session = try await server.connect(token: first.jwt)
        let room = try await server.createRoom(displayName: "R")
        let membership = try await session.join(room.id)

        // The same client again (a renewed token, a second connection): its claim gets the same user back.
        let again = try await server.auth(name: "alice")
        #expect(again.userID == first.userID)
        let second = try await server.connect(token: again.jwt)
        #expect(try await second.join(room.id).memberID == membership.memberID)

        // Another client without the claim, while alice is connected: a separate identity named alice.
        let stranger = ParlorServer(host: "127.0.0.1", port: app.port, configuration: .fastForTests)
        let other = try await stranger.auth(name: "alice")
        #expect(other.name == "alice")
        #expect(other.userID != first.userID)
        // An app that kept the claim elsewhere passes it explicitly.
        #expect(try await stranger.auth(name: "alice", claim: first.claim).userID == first.userID)
    }
}

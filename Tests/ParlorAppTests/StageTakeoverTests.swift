import Foundation
import Testing
import ParlorApp
import PostgresTestCluster

/// Issue 34, items 8 and 13, against the `parlor` binary: ways to become a stage room's moderator without being
/// given the role.
@Suite struct StageTakeoverTests {
    static func request(_ port: Int, _ method: String, _ path: String, json: String? = nil, token: String? = nil) throws -> TestResponse {
        try RawConnection.oneRequest(port, method, path, json: json, headers: token.map { ["Authorization": "Bearer \($0)"] } ?? [:])
    }

    static let stageRoom = #"{"display_name":"Town hall","properties":{"mode":"stage"}}"#

    /// Item 13: a stage room created without a token had no creator, so whoever joined first moderated it. Now
    /// creating one needs a token; open rooms are still created without one (the tutorial's flow).
    @Test func aStageRoomCannotBeCreatedWithoutAToken() throws {
        let server = try ServerProcess(["--auth-rate", "0"])
        let port = server.port
        let anonymous = try Self.request(port, "POST", "/rooms", json: Self.stageRoom)
        #expect(anonymous.status == 401, "\(anonymous.status) \(anonymous.text)")
        #expect(anonymous.errorCode == "auth:error:token-required")
        #expect(anonymous.header("WWW-Authenticate") == "Bearer")
        // Nothing was created for a first joiner to take over.
        let attacker = try auth(port: port, name: "mallory")
        #expect(try Self.request(port, "GET", "/rooms", token: attacker.jwt).array.isEmpty)

        // The tutorial's anonymous open room is unchanged.
        #expect(try Self.request(port, "POST", "/rooms", json: #"{"display_name":"Open"}"#).status == 201)
        #expect(try Self.request(port, "POST", "/rooms", json: #"{"display_name":"Open","properties":{"mode":"open"}}"#).status == 201)

        // With a token the creator moderates and a first joiner who is not the creator listens.
        let alice = try auth(port: port, name: "alice")
        let created = try Self.request(port, "POST", "/rooms", json: Self.stageRoom, token: alice.jwt)
        #expect(created.status == 201)
        let room = try #require(created.object["id"] as? String)
        let first = try TestWebSocket(port: port, token: attacker.jwt)
        #expect(try first.join(room)["role"] as? String == "listener")
        #expect(errorCode(try first.request("room:lock", ["cid": room])) == "member:error:not-allowed")
        let creator = try TestWebSocket(port: port, token: alice.jwt)
        #expect(try creator.join(room)["role"] as? String == "moderator")
        #expect(server.child.process.isRunning)
    }
}

extension StageTakeoverTests {
    /// Item 8: POST /auth handed the name of an offline room creator (or moderator) to whoever asked, who then ran
    /// the room. Now an identity that runs a room still open comes back only with its claim.
    @Test func anOfflineCreatorsOrModeratorsNameGivesAStrangerANewIdentity() throws {
        let server = try ServerProcess(["--grace-period", "0.2", "--auth-rate", "0"])
        try Self.offlineRunnersKeepTheirIdentities(port: server.port)
        #expect(server.child.process.isRunning)
    }

    @Test func anOfflineCreatorsNameGivesAStrangerANewIdentityOnPostgreSQL() throws {
        let url = try TestPostgres.shared().makeDatabase()
        try withServer({ configuration in
            configuration.databasePath = url.string
            configuration.jwtSecret = nil
            configuration.dataDirectory = NSTemporaryDirectory() + "/parlor-unused-\(UUID().uuidString)"
            configuration.rooms.gracePeriod = .milliseconds(200)
        }) { app in
            guard case .postgres = app.storage else { throw TestFailure("the server did not open PostgreSQL") }
            try Self.offlineRunnersKeepTheirIdentities(port: app.port)
        }
    }

    static func offlineRunnersKeepTheirIdentities(port: Int) throws {
        // alice creates a stage room and goes offline without ever joining it.
        let alice = try auth(port: port, name: "alice")
        let room = try #require(try request(port, "POST", "/rooms", json: stageRoom, token: alice.jwt).object["id"] as? String)

        // A stranger asking for "alice" gets a separate identity that cannot run the room.
        let stranger = try auth(port: port, name: "alice")
        #expect(stranger.userID != alice.userID, "the creator's identity was handed over")
        let lock = try request(port, "POST", "/rooms/\(room)/lock", token: stranger.jwt)
        #expect(lock.status == 403 && lock.errorCode == "room:error:forbidden", "\(lock.status) \(lock.text)")
        #expect(try request(port, "DELETE", "/rooms/\(room)", token: stranger.jwt).status == 403)
        let impostor = try TestWebSocket(port: port, token: stranger.jwt)
        #expect(try impostor.join(room)["role"] as? String == "listener")
        // alice's own token still works, and her claim gets her identity back.
        #expect(try auth(port: port, name: "alice", claim: alice.claim).userID == alice.userID)
        #expect(try request(port, "GET", "/rooms/\(room)", token: alice.jwt).status == 200)

        // A moderator who is not the creator, once offline, is kept the same way.
        let creator = try TestWebSocket(port: port, token: alice.jwt)
        _ = try creator.join(room)
        let bob = try auth(port: port, name: "bob")
        let bobSocket = try TestWebSocket(port: port, token: bob.jwt)
        let bobMember = try #require(try bobSocket.join(room)["member_id"] as? String)
        _ = try creator.call("member:role", ["cid": room, "member_id": bobMember, "role": "moderator"])
        bobSocket.drop()
        let left = try creator.event("member:left", in: room, member: bobMember)
        #expect((left["body"] as? [String: Any])?["reason"] as? String == "dropped")
        #expect(try auth(port: port, name: "bob").userID != bob.userID, "the moderator's identity was handed over")

        // Once the room is closed, nobody runs it: the names are free again, as any name nobody uses.
        #expect(try request(port, "DELETE", "/rooms/\(room)", token: alice.jwt).status == 204)
        _ = try creator.event("member:left", in: room)
        creator.drop()
        #expect(try auth(port: port, name: "bob").userID == bob.userID)
    }
}

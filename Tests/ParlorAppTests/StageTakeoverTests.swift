import Foundation
import Testing
import ParlorApp

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

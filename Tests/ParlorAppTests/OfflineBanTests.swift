#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ParlorApp
import PostgresTestCluster

/// Issue 34, item 12, against the `parlor` binary: a ban of a user who had already left held no address, so the
/// same client came straight back under a new name. Now the ban takes the addresses the user connected from lately.
@Suite struct OfflineBanTests {
    /// A stage room by alice (from 127.0.0.1); bob joins from 127.0.0.3, leaves and disconnects; then alice bans him.
    /// Returns the room.
    static func banAfterLeaving(port: Int) throws -> String {
        let alice = try auth(port: port, name: "alice")
        let room = try #require(try StageTakeoverTests.request(port, "POST", "/rooms", json: StageTakeoverTests.stageRoom, token: alice.jwt)
            .object["id"] as? String)
        let moderator = try TestWebSocket(port: port, token: alice.jwt)
        _ = try moderator.join(room)
        let bob = try join(port, room, name: "bob", from: "127.0.0.3")
        _ = try bob.socket.call("conversation:leave", ["cid": room])
        bob.socket.drop()
        let banned = try moderator.call("member:ban", ["cid": room, "user_id": bob.userID, "seconds": 600])
        #expect(banned["until"] is String)
        return room
    }

    static func join(_ port: Int, _ room: String, name: String, from source: String) throws -> (socket: TestWebSocket, userID: String, reply: [String: Any]) {
        let grant = try RawConnection.oneRequest(port, "POST", "/auth", json: #"{"name":"\#(name)"}"#, from: source)
        let socket = try TestWebSocket(port: port, token: try #require(grant.object["jwt"] as? String), source: source)
        return (socket, socket.userID, try socket.request("conversation:join", ["cid": room]))
    }

    /// A new name from the banned user's address is refused; another address is not.
    static func expectAddressBanned(port: Int, room: String, attempt: Int) throws {
        let comeback = try join(port, room, name: "bob-again-\(attempt)", from: "127.0.0.3")
        #expect(errorCode(comeback.reply) == "room:error:banned", "\(comeback.reply)")
        let neighbour = try join(port, room, name: "carol-\(attempt)", from: "127.0.0.4")
        #expect(neighbour.reply["type"] as? String == "conversation:join:success", "\(neighbour.reply)")
    }

    @Test func aBanOfAUserWhoLeftHoldsItsAddressAcrossARestart() throws {
        let directory = NSTemporaryDirectory() + "parlor-ban-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let arguments = ["--database", directory + "/parlor.db", "--auth-rate", "0", "--jwt-secret", String(repeating: "k", count: 40)]
        let first = try ServerProcess(arguments)
        let baseline = try first.residentBytes()
        let room = try Self.banAfterLeaving(port: first.port)
        try Self.expectAddressBanned(port: first.port, room: room, attempt: 1)
        #expect(try !ServerProcess.checksMemory || first.residentBytes() - baseline < 32 * ServerProcess.mebibyte)
        kill(first.pid, SIGKILL)
        _ = first.child.waitForExit(timeout: 5)

        // The addresses are stored with the ban.
        let second = try ServerProcess(arguments)
        try Self.expectAddressBanned(port: second.port, room: room, attempt: 2)
    }

    @Test func aBanOfAUserWhoLeftHoldsItsAddressOnPostgreSQL() throws {
        let url = try TestPostgres.shared().makeDatabase()
        try withServer({ configuration in
            configuration.databasePath = url.string
            configuration.jwtSecret = nil
            configuration.dataDirectory = NSTemporaryDirectory() + "/parlor-unused-\(UUID().uuidString)"
        }) { app in
            guard case .postgres = app.storage else { throw TestFailure("the server did not open PostgreSQL") }
            let room = try Self.banAfterLeaving(port: app.port)
            try Self.expectAddressBanned(port: app.port, room: room, attempt: 1)
        }
    }
}

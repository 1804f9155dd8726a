#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorApp
import ParlorPostgres
import PostgresTestCluster
import Testing

/// "The server never holds a key" (issue 40), the server's side: key messages relayed between members leave no trace
/// in the database or the log, and the room's property survives on PostgreSQL.
@Suite struct E2EEKeyCustodyTests {
    /// The `parlor serve` binary on a SQLite file, logging at debug level: two members relay key messages carrying a
    /// marker; afterwards neither the database files nor anything the process wrote contain it.
    @Test func relayedKeyMaterialIsNeitherStoredNorLogged() throws {
        try withTemporaryDirectory { directory in
            let database = directory + "/parlor.db"
            let child = try ExecutableTests.Child(["serve", "--host", "127.0.0.1", "--port", "0", "--database", database,
                                                   "--log-level", "debug", "--log-format", "json"], in: directory)
            let port = try ExecutableTests.port(fromListeningLine: try child.readLine())
            let marker = "KEYMATERIAL-7f3c9a1e5b2d4068"
            let created = try RawConnection.oneRequest(port, "POST", "/rooms", json: #"{"display_name":"Private","properties":{"e2ee":true}}"#)
            let room = try #require(created.object["id"] as? String)
            let alice = try TestWebSocket(port: port, token: try auth(port: port, name: "alice").jwt)
            let bob = try TestWebSocket(port: port, token: try auth(port: port, name: "bob").jwt)
            let members = try [alice, bob].map { try #require(try $0.call("conversation:join", ["cid": room, "e2ee": true])["member_id"] as? String) }
            // Both directions, as a key exchange goes; a wrapped key and a public key both carry the marker.
            _ = try alice.call("e2ee:key", ["cid": room, "v": 1, "public_key": marker, "keys": [["to": members[1], "key_id": 1, "wrapped": marker + "-a"]]])
            #expect(((try bob.event("e2ee:key", in: room)["body"] as? [String: Any])?["public_key"] as? String) == marker)
            _ = try bob.call("e2ee:key", ["cid": room, "v": 1, "public_key": marker + "-b", "keys": [["to": members[0], "key_id": 1, "wrapped": marker + "-b"]]])
            #expect(((try alice.event("e2ee:key", in: room)["body"] as? [String: Any])?["public_key"] as? String) == marker + "-b")
            // A refused key message (too large) is not logged either.
            let oversized = marker + String(repeating: "x", count: 17 * 1024)
            #expect(errorCode(try alice.request("e2ee:key", ["cid": room, "pad": oversized])) == "e2ee:error:too-large")
            // Something is stored and logged, so the scan below reads real files.
            _ = try alice.call("message:send", ["cid": room, "ciphertext": "AQFjaXBoZXJ0ZXh0"])

            #expect(kill(child.process.processIdentifier, SIGTERM) == 0)
            #expect(child.waitForExit(timeout: 10) == 0)
            let logged = child.errorOutput() + child.remainingOutput()
            #expect(logged.contains("\"level\":\"info\""), "the log was captured: \(logged.prefix(300))")
            #expect(!logged.contains("KEYMATERIAL"), "the key material is in the log")
            let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("parlor.db") }
            #expect(files.contains("parlor.db"))
            var storedBytes = 0
            for file in files {
                let bytes = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + file))
                storedBytes += bytes.count
                #expect(bytes.range(of: Data("KEYMATERIAL".utf8)) == nil, "the key material is in \(file)")
                if file == "parlor.db" { #expect(bytes.range(of: Data("AQFjaXBoZXJ0ZXh0".utf8)) != nil, "the ciphertext chat is stored") }
            }
            #expect(storedBytes > 0)
        }
    }

    /// Two nodes on one PostgreSQL: a key message reaches members on both nodes, through the signal queue to the
    /// other node, and no row of it stays once delivered.
    @Test func aKeyMessageReachesMembersOnAnotherNodeAndIsNotKept() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let nodes = try (0..<2).map { _ in try ClusterTests.node(url) }
        defer { nodes.forEach { $0.shutdown() } }
        let room = try createRoom(nodes[0], "Private", properties: #"{"e2ee":true}"#)
        let alice = try TestWebSocket(nodes[0], name: "alice")
        let carol = try TestWebSocket(nodes[0], name: "carol")
        let bob = try TestWebSocket(nodes[1], name: "bob")
        let aliceMember = try #require(try alice.call("conversation:join", ["cid": room, "e2ee": true])["member_id"] as? String)
        _ = try carol.call("conversation:join", ["cid": room, "e2ee": true])
        let bobMember = try #require(try bob.call("conversation:join", ["cid": room, "e2ee": true])["member_id"] as? String)
        // Node 0 knows bob once it has caught up his join: the member list says so.
        let members = try alice.call("conversation:members", ["cid": room])
        #expect(memberNames(members) == ["alice", "bob", "carol"])
        // Larger than a NOTIFY may carry (8,000 bytes).
        let padding = String(repeating: "k", count: 12_000)
        _ = try alice.call("e2ee:key", ["cid": room, "v": 1, "pad": padding])
        for client in [carol, bob] {
            let relayed = try client.event("e2ee:key", in: room)
            #expect(relayed["from"] as? String == aliceMember)
            #expect((relayed["body"] as? [String: Any])?["pad"] as? String == padding)
        }
        _ = try bob.call("e2ee:key", ["cid": room, "v": 1])
        #expect(try alice.event("e2ee:key", in: room)["from"] as? String == bobMember)
        #expect(try carol.event("e2ee:key", in: room)["from"] as? String == bobMember)
        let admin = try PostgresConnection(url: url)
        #expect(try admin.queryOne("SELECT COUNT(*) AS n FROM signals")?.int("n") == 0)
        #expect(try admin.queryOne("SELECT COUNT(*) AS n FROM events WHERE type = 'e2ee:key'")?.int("n") == 0)
    }

    /// On PostgreSQL the property is stored: a second server on the same database still refuses a join without the
    /// statement, and lists the room as encrypted.
    @Test func thePropertySurvivesOnPostgreSQL() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let configure: (inout AppConfiguration) -> Void = { configuration in
            configuration.databasePath = url.string
            configuration.jwtSecret = nil
            configuration.dataDirectory = NSTemporaryDirectory() + "/parlor-unused-\(UUID().uuidString)"
        }
        let room = try withServer(configure) { app in
            let room = try createRoom(app, "Private", properties: #"{"e2ee":true}"#)
            let alice = try TestWebSocket(app, name: "alice")
            _ = try alice.call("conversation:join", ["cid": room, "e2ee": true])
            return room
        }
        try withServer(configure) { app in
            let fetched = try http(app, "GET", "/rooms/\(room)")
            #expect((fetched.object["properties"] as? [String: Any])?["e2ee"] as? Bool == true, "\(fetched.text)")
            let bob = try TestWebSocket(app, name: "bob")
            #expect(errorCode(try bob.request("conversation:join", ["cid": room])) == "room:error:encryption-required")
            #expect(try bob.call("conversation:join", ["cid": room, "e2ee": true])["e2ee"] as? Bool == true)
        }
        let stored = try PostgresConnection(url: url).queryOne("SELECT e2ee FROM rooms WHERE id = $1", [.text(room)])
        #expect(stored?.int("e2ee") == 1)
    }
}

import Foundation
import ParlorApp
import ParlorPostgres
import PostgresTestCluster
import Testing

/// Parlor on PostgreSQL (`--database postgres://…`) against the test run's own cluster: the same behaviour over a
/// real WebSocket as on SQLite, one JWT secret for every server on the database, and /healthz that says whether
/// the database is reachable.
@Suite struct PostgresServerTests {
    /// A server on a fresh PostgreSQL database, with no configured JWT secret and a data directory that must stay
    /// untouched (the secret lives in the database).
    private func withPostgresServer<T>(_ url: PostgresURL, dataDirectory: String? = nil,
                                       _ body: (ParlorApplication) throws -> T) throws -> T {
        try withServer({ configuration in
            configuration.databasePath = url.string
            configuration.jwtSecret = nil
            configuration.dataDirectory = dataDirectory ?? NSTemporaryDirectory() + "/parlor-unused-\(UUID().uuidString)"
        }) { app in
            guard case .postgres = app.storage else { throw TestFailure("the server did not open PostgreSQL") }
            return try body(app)
        }
    }

    /// Two members join, one leaves: what the other sees (ids, types, names, reasons) and the stored history.
    private func joinAndLeave(_ app: ParlorApplication) throws -> [String] {
        let room = try createRoom(app)
        let alice = try TestWebSocket(app, name: "alice")
        let bob = try TestWebSocket(app, name: "bob")
        var transcript = ["alice joins at \(try alice.join(room)["last_event_id"] ?? "-")"]
        let bobJoin = try bob.join(room)
        let bobMember = try #require(bobJoin["member_id"] as? String)
        transcript.append("bob joins at \(bobJoin["last_event_id"] ?? "-") seeing \(memberNames(bobJoin))")
        let joined = try alice.event("member:joined", in: room, member: bobMember)
        let user = (joined["body"] as? [String: Any])?["user"] as? [String: Any]
        transcript.append("member:joined \(joined["id"] ?? "-") \(user?["name"] ?? "-")")
        _ = try bob.call("conversation:leave", ["cid": room])
        let left = try alice.event("member:left", in: room, member: bobMember)
        transcript.append("member:left \(left["id"] ?? "-") \((left["body"] as? [String: Any])?["reason"] ?? "-")")
        transcript.append("members \(memberNames(try alice.call("conversation:members", ["cid": room])))")
        let history = try http(app, "GET", "/rooms/\(room)/events", token: try token(app, "alice"))
        let stored = (try JSONSerialization.jsonObject(with: Data(history.body)) as? [[String: Any]] ?? [])
            .map { "\($0["id"] ?? "-") \($0["type"] ?? "-")" }
        transcript.append("history \(history.status) \(stored)")
        transcript.append("alice saw \(alice.eventIDs[room] ?? [])")
        return transcript
    }

    @Test func aServerOnPostgreSQLServesTheSameJoinAndLeaveAsOnSQLite() throws {
        let onSQLite = try withServer { try joinAndLeave($0) }
        let url = try TestPostgres.shared().makeDatabase()
        let onPostgres = try withPostgresServer(url) { try joinAndLeave($0) }
        #expect(onPostgres == onSQLite)
        #expect(onSQLite.last == "alice saw [1, 2, 3]")
        // The record is in PostgreSQL.
        let connection = try PostgresConnection(url: url)
        let types = try connection.query("SELECT type FROM events ORDER BY seq").compactMap { $0.string("type") }
        #expect(types == ["member:joined", "member:joined", "member:left"])
    }

    @Test func serversOnTheSameDatabaseShareOneJWTSecretKeptInIt() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let dataDirectory = NSTemporaryDirectory() + "/parlor-pg-data-\(UUID().uuidString)"
        try withPostgresServer(url, dataDirectory: dataDirectory) { first in
            try withPostgresServer(url, dataDirectory: dataDirectory) { second in
                let fromFirst = try token(first, "alice")
                let socket = try TestWebSocket(port: second.port, token: fromFirst)
                #expect(socket.userID.hasPrefix("USR-"))
                #expect(try http(second, "GET", "/rooms", token: fromFirst).status == 200)
            }
        }
        let connection = try PostgresConnection(url: url)
        #expect(try connection.queryOne("SELECT length(value) AS n FROM server_secrets WHERE name = 'jwt'")?.int("n") == 32)
        #expect(!FileManager.default.fileExists(atPath: dataDirectory), "no secret file: the database holds it")

        // A server on another database has a secret of its own and refuses the first database's tokens.
        let other = try TestPostgres.shared().makeDatabase()
        let fromFirstDatabase = try withPostgresServer(url) { try token($0, "bob") }
        let status = try withPostgresServer(other) { app in try http(app, "GET", "/rooms", token: fromFirstDatabase).status }
        #expect(status == 401)
    }

    @Test func healthSaysWhetherPostgreSQLIsReachable() throws {
        let cluster = try TestPostgres.shared()
        let url = try cluster.makeDatabase()
        let name = String(url.string.split(separator: "/").last ?? "")
        try withPostgresServer(url) { app in
            let healthy = try http(app, "GET", "/healthz")
            #expect(healthy.status == 200 && healthy.object["status"] as? String == "ok")

            // The database goes away under the server: its connections are cut and cannot come back.
            let admin = try PostgresConnection(url: try cluster.url(database: "postgres"))
            try admin.execute("DROP DATABASE \(name) WITH (FORCE)")
            let unhealthy = try http(app, "GET", "/healthz")
            #expect(unhealthy.status == 503)
            #expect((unhealthy.object["detail"] as? String)?.contains("database unreachable") == true, "\(unhealthy.text)")
            // Requests that need the database are told to try later, not that the server broke.
            expectProblem(try http(app, "POST", "/auth", json: #"{"name":"late"}"#), 503, "server:error:unavailable")
        }
    }

    @Test func aServerWhoseConnectionsWereCutServesAgainWithoutARestart() throws {
        let url = try TestPostgres.shared().makeDatabase()
        try withPostgresServer(url) { app in
            let room = try createRoom(app)
            let alice = try TestWebSocket(app, name: "alice")
            _ = try alice.join(room)
            // Every connection of the server is cut (as by a PostgreSQL restart or a network cut).
            let admin = try PostgresConnection(url: url)
            let cut = try admin.query("""
                SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid()
                """)
            #expect(cut.count >= 2 && cut.allSatisfy { $0.bool("done") == true })

            // Each connection reconnects at its next transaction: health, the rooms thread's writes, REST reads.
            #expect(try http(app, "GET", "/healthz").status == 200)
            let bob = try TestWebSocket(app, name: "bob")
            let bobJoin = try bob.join(room)
            #expect(bobJoin["last_event_id"] as? Int == 2)
            let bobMember = try #require(bobJoin["member_id"] as? String)
            #expect(try alice.event("member:joined", in: room, member: bobMember)["id"] as? Int == 2)
            #expect(try http(app, "GET", "/rooms/\(room)", token: try token(app, "alice")).status == 200)
        }
    }

    @Test func parlorMigrateAppliesAndReportsOnPostgreSQL() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let before = try CLITests.run(["migrate", "--status", "--json", "--database", url.string])
        #expect(before.status == 0)
        #expect(before.output.contains(#""pending":["001_initial","002_cluster_nodes","003_media_home","004_member_attachments","005_webhook_outbox","006_identity_hardening","007_recordings","008_e2ee_rooms","009_stream_public","010_node_http_url","011_media_link_offers","012_media_room_listeners"]"#), "\(before.output)")
        #expect(try CLITests.run(["migrate", "--database", url.string]).status == 0)
        let after = try CLITests.run(["migrate", "--status", "--json", "--database", url.string])
        let report = try JSONSerialization.jsonObject(with: Data(after.output.utf8)) as? [String: Any]
        #expect((report?["applied"] as? [[String: Any]])?.map { $0["id"] as? String } == ["001_initial", "002_cluster_nodes", "003_media_home", "004_member_attachments", "005_webhook_outbox", "006_identity_hardening",
                                                                                          "007_recordings", "008_e2ee_rooms", "009_stream_public", "010_node_http_url", "011_media_link_offers", "012_media_room_listeners"])
        #expect((report?["pending"] as? [Any])?.isEmpty == true)
        let unreachable = try CLITests.run(["migrate", "--database", try TestPostgres.shared().url(database: "no_such_database").string])
        #expect(unreachable.status == 1)
    }

    @Test func aMalformedPostgreSQLURLIsAClearConfigurationError() throws {
        #expect {
            try withServer({ $0.databasePath = "postgres://parlor@127.0.0.1:1/x?sslmod=require" }) { _ in }
        } throws: { error in
            "\(error)".contains("--database") && "\(error)".contains("sslmod")
        }
    }
}

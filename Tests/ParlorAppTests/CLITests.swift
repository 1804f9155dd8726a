#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ParlorApp
import ParlorRooms

/// The `parlor` subcommands against an in-process server, as scripts would use them.
@Suite struct CLITests {
    typealias Child = ExecutableTests.Child

    /// Runs `parlor arguments…` to completion; returns its exit status and stdout.
    static func run(_ arguments: [String], timeout: Double = 15) throws -> (status: Int32, output: String) {
        try withTemporaryDirectory { directory in
            let child = try Child(arguments, in: directory)
            guard let status = child.waitForExit(timeout: timeout) else { throw TestFailure("parlor \(arguments) did not finish") }
            return (status, child.remainingOutput())
        }
    }

    /// Each command's `--help` lists every option it accepts, and an option outside the list is a usage error.
    static func expectAcceptedOptions(_ accepted: [String: [String]]) throws {
        for (command, options) in accepted {
            let help = try run([command, "--help"])
            #expect(help.status == 0, "\(command)")
            for option in options { #expect(help.output.contains(option), "parlor \(command) --help lacks \(option)") }
            #expect(try run([command, "--not-an-option"]).status == 2, "\(command)")
        }
    }

    /// Runs `parlor arguments…` to completion; returns its exit status and stderr.
    static func runCapturingErrors(_ arguments: [String], timeout: Double = 15) throws -> (status: Int32, errors: String) {
        try withTemporaryDirectory { directory in
            let child = try Child(arguments, in: directory)
            guard let status = child.waitForExit(timeout: timeout) else { throw TestFailure("parlor \(arguments) did not finish") }
            return (status, child.errorOutput())
        }
    }

    @Test func tokenIsMintedOfflineWithTheSecret() throws {
        let secret = "cli-secret-0123456789-abcdef"
        let minted = try Self.run(["token", "--name", "alice", "--ttl", "60", "--jwt-secret", secret])
        #expect(minted.status == 0)
        let claims = try TokenService(secret: Array(secret.utf8), timeToLiveSeconds: 1).verify(minted.output.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(claims.subject == "alice")
        #expect(claims.expiresAt - claims.issuedAt == 60)
        let missing = try withTemporaryDirectory { try Self.run(["token", "--name", "alice", "--data-dir", $0]) }
        #expect(missing.status == 3)
        #expect(try Self.run(["token"]).status == 2)
    }

    @Test func tokenJSONEscapesTheName() throws {
        let name = #"al"i\ce"#
        let minted = try Self.run(["token", "--name", name, "--jwt-secret", "cli-secret-0123456789-abcdef", "--json"])
        #expect(minted.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(minted.output.utf8)) as? [String: Any]
        #expect(object?["name"] as? String == name, "output: \(minted.output)")
        #expect(object?["jwt"] is String)
    }

    @Test func roomsEventsAndWatchTalkToAServer() throws {
        try withServer { app in
            let server = "http://127.0.0.1:\(app.port)"
            let created = try Self.run(["rooms", "create", "Friday chat", "--server", server])
            #expect(created.status == 0)
            let room = created.output.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(room.hasPrefix("RM-"))
            let listed = try Self.run(["rooms", "list", "--json", "--server", server])
            let rooms = try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [[String: Any]]
            #expect(rooms?.first { $0["id"] as? String == room }?["display_name"] as? String == "Friday chat")
            #expect(try Self.run(["rooms", "list", "--server", server]).output.contains("Friday chat"))

            let alice = try TestWebSocket(app, name: "alice")
            _ = try alice.join(room)
            let events = try Self.run(["events", room, "--json", "--server", server])
            let history = try JSONSerialization.jsonObject(with: Data(events.output.utf8)) as? [[String: Any]]
            #expect(history?.map { $0["type"] as? String } == ["member:joined"])
            #expect(try Self.run(["events", "RM-nope", "--server", server]).status == 3)

            // join stays in the room and prints events; Ctrl-C makes it leave.
            let joiner = try withTemporaryDirectory { try Child(["join", room, "--as", "bob", "--server", server], in: $0) }
            let first = try JSONSerialization.jsonObject(with: Data(try joiner.readLine().utf8)) as? [String: Any]
            #expect(first?["type"] as? String == "joined")
            let bobMember = try #require(first?["member_id"] as? String)
            _ = try alice.event("member:joined", in: room, member: bobMember)
            let carol = try TestWebSocket(app, name: "carol")
            _ = try carol.join(room)
            var line = try joiner.readLine()
            while !line.contains("member:joined") || !line.contains("carol") { line = try joiner.readLine() }
            let watcher = try withTemporaryDirectory { try Child(["watch", room, "--since", "start", "--server", server], in: $0) }
            #expect(try watcher.readLine() == "-  watching  \(room)  after event 0")
            #expect(try watcher.readLine().contains("member:joined"), "the history after --since")

            kill(joiner.process.processIdentifier, SIGINT)
            #expect(joiner.waitForExit(timeout: 10) == 0)
            let left = try alice.event("member:left", in: room, member: bobMember)
            #expect((left["body"] as? [String: Any])?["reason"] as? String == "left")
            kill(watcher.process.processIdentifier, SIGTERM)
            #expect(watcher.waitForExit(timeout: 10) == 0)
        }
    }

    @Test func migrateAppliesAndReports() throws {
        try withTemporaryDirectory { directory in
            let database = directory + "/cli.db"
            #expect(try Self.run(["migrate", "--status", "--database", database]).status == 3)
            #expect(try Self.run(["migrate", "--database", database]).status == 0)
            let status = try Self.run(["migrate", "--status", "--json", "--database", database])
            let report = try JSONSerialization.jsonObject(with: Data(status.output.utf8)) as? [String: Any]
            #expect((report?["applied"] as? [[String: Any]])?.first?["id"] as? String == "001_initial")
            #expect((report?["pending"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func usageErrorsAndHelp() throws {
        #expect(try Self.run(["frobnicate"]).status == 2)
        #expect(try Self.run(["rooms", "list", "--server", "http://127.0.0.1:1"]).status == 1)
        for command in ["serve", "token", "rooms", "join", "watch", "events", "migrate", "openapi", "hand", "role"] {
            let help = try Self.run([command, "--help"])
            #expect(help.status == 0, "\(command) --help")
            #expect(help.output.contains("Usage: parlor"), "\(command) --help")
        }
        #expect(try Self.run(["--help"]).output.contains("Exit codes"))
    }
}

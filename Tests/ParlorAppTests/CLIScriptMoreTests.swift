#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ParlorApp
import ParlorRooms

/// More of the CLI as scripts use it: reset, --token, watch, members, and help that lists every option.
@Suite struct CLIScriptMoreTests {
    @Test func resetEndsJoinedSessionsWithoutReconnecting() throws {
        try withServer(CLIScriptTests.testMode) { app in
            let room = try createRoom(app)
            let watcher = try TestWebSocket(app, name: "carol")
            let (joiner, _) = try CLIScriptTests.join(room, as: "bob", ["--json"], port: app.port)
            #expect(try CLITests.run(["reset", "--admin-token", AdminTests.adminToken, "--server", "http://127.0.0.1:\(app.port)"]).status == 0)
            #expect(try watcher.closeCode() == ParlorCloseCode.serverReset)
            // The client ends the session at once (no reconnect into a server that forgot it).
            let next = try CLIScriptTests.line(containing: "session:", from: joiner)
            #expect(next.contains("session:ended") && next.contains("server-reset"), Comment(rawValue: next))
            #expect(joiner.waitForExit(timeout: 10) == 1)
        }
    }

    @Test func joinTakesATokenForClosedServers() throws {
        try withServer({ $0.access = .closed }) { app in
            let minted = try CLITests.run(["token", "--name", "bob", "--jwt-secret", AppConfiguration.testing().jwtSecret!])
            let jwt = minted.output.trimmingCharacters(in: .whitespacesAndNewlines)
            let created = try http(app, "POST", "/rooms", json: #"{"display_name":"Closed"}"#, headers: ["Authorization": "Bearer \(jwt)"])
            let room = try #require(created.object["id"] as? String)
            // Without a token, join cannot get one: POST /auth is off.
            let refused = try CLIScriptTests.child(["join", room, "--as", "bob", "--server", "http://127.0.0.1:\(app.port)"])
            #expect(refused.waitForExit(timeout: 10) == 1)
            let joiner = try CLIScriptTests.child(["join", room, "--token", jwt, "--server", "http://127.0.0.1:\(app.port)"])
            #expect(try joiner.readLine().contains(#""type":"joined""#))
            kill(joiner.process.processIdentifier, SIGTERM)
            #expect(joiner.waitForExit(timeout: 10) == 0)
        }
    }

    @Test func watchUntilAndTimeoutAndMembers() throws {
        try withServer { app in
            let server = "http://127.0.0.1:\(app.port)"
            let room = try createRoom(app)
            let alice = try TestWebSocket(app, name: "alice")
            let aliceMember = try #require(try alice.join(room)["member_id"] as? String)
            let members = try CLITests.run(["members", room, "--json", "--server", server])
            let list = try JSONSerialization.jsonObject(with: Data(members.output.utf8)) as? [[String: Any]]
            #expect(list?.map { $0["member_id"] as? String } == [aliceMember])
            // alice's join is history: --since start finds it, a watch from now does not.
            let seen = try CLITests.run(["watch", room, "--json", "--since", "start", "--until", "member:joined", "--timeout", "5", "--server", server])
            #expect(seen.status == 0)
            #expect(seen.output.contains(#""type":"member:joined""#))
            #expect(try CLITests.run(["watch", room, "--until", "member:joined", "--timeout", "0.3", "--server", server]).status == 4)
            #expect(try CLITests.run(["watch", room, "--until", "member:left", "--timeout", "0.3", "--server", server]).status == 4)
            #expect(try CLITests.run(["members", "RM-nope", "--server", server]).status == 3)
        }
    }

    /// Every option a subcommand accepts appears in its --help (the parser's lists, spelled out here).
    @Test func helpListsEveryAcceptedOption() throws {
        let accepted: [String: [String]] = [
            "token": ["--name", "--ttl", "--jwt-secret", "--data-dir", "--json", "--dev"],
            "migrate": ["--status", "--database", "--data-dir", "--json"],
            "rooms": ["--server", "--name", "--ttl", "--max-members", "--token", "--json", "--mode", "--e2ee"],
            "join": ["--server", "--as", "--token", "--until", "--count", "--any", "--timeout", "--since", "--reconnect-attempts",
                     "--raise-hand", "--hold-reconnects", "--json", "SIGUSR1", "SIGUSR2"],
            "watch": ["--server", "--since", "--as", "--token", "--until", "--count", "--any", "--timeout", "--json"],
            "hand": ["--server", "--token", "--admin-token", "--dev", "--json"],
            "role": ["--server", "--token", "--admin-token", "--dev", "--json"],
            "events": ["--server", "--since", "--token", "--json"],
            "members": ["--server", "--token", "--json"],
            "drop": ["--server", "--admin-token", "--dev", "--json"],
            "reset": ["--server", "--admin-token", "--dev"],
        ]
        try CLITests.expectAcceptedOptions(accepted)
        let top = try CLITests.run(["--help"]).output
        for command in accepted.keys { #expect(top.contains(command), "parlor --help lacks \(command)") }
        #expect(top.contains("4 timed out"))
        #expect(top.contains("--reconnect-attempts") && top.contains("--ready-file") && top.contains("--since"))
    }
}

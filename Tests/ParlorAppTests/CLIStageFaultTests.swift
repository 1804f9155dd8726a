#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ParlorApp

/// A stage room run from the command line (rooms create --mode stage, hand, role, join --raise-hand) and a member
/// held away past the grace period with join's signals (issue 39 item 3).
@Suite struct CLIStageFaultTests {
    @Test func stageRoomHandsAndRolesFromTheCommandLine() throws {
        try withServer(AdminTests.admin) { app in
            let server = "http://127.0.0.1:\(app.port)"
            let aliceToken = try token(app, "alice")
            let bobToken = try token(app, "bob")
            #expect(try CLITests.run(["rooms", "create", "Class", "--mode", "stage", "--server", server]).status == 2, "a stage room needs its creator")
            #expect(try CLITests.run(["rooms", "create", "Class", "--mode", "party", "--token", aliceToken, "--server", server]).status == 2)
            #expect(try CLITests.run(["rooms", "create", "Class", "--ttl", "soon", "--server", server]).status == 2)
            let created = try CLITests.run(["rooms", "create", "Class", "--mode", "stage", "--max-members", "50", "--token", aliceToken,
                                            "--json", "--server", server])
            let room = try #require(try CLIWaitTests.json(created.output)["id"] as? String)
            #expect(try CLIWaitTests.json(created.output)["mode"] as? String == "stage")
            let alice = try TestWebSocket(port: app.port, token: aliceToken)
            #expect(try alice.join(room)["role"] as? String == "moderator")

            // A hand needs a membership: bob is not joined yet.
            #expect(try CLITests.run(["hand", "raise", room, "--token", bobToken, "--server", server]).status == 1)
            let joiner = try CLIScriptTests.child(["join", room, "--token", bobToken, "--raise-hand", "--until", "member:role member=me role=speaker",
                                                   "--timeout", "30", "--server", server])
            let joined = try CLIWaitTests.json(try joiner.readLine())
            #expect(joined["role"] as? String == "listener")
            let bobMember = try #require(joined["member_id"] as? String)
            func hands() throws -> [String] {
                let listed = try CLITests.run(["members", room, "--hands", "--json", "--server", server])
                return (try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [[String: Any]])?.compactMap { $0["member_id"] as? String } ?? []
            }
            #expect(try hands() == [bobMember], "raised before the joined line")

            // bob's own hand from a second process: it attaches to his membership and leaves it in place.
            #expect(try CLITests.run(["hand", "lower", room, "--token", bobToken, "--server", server]).status == 0)
            #expect(try hands().isEmpty)
            let raised = try CLITests.run(["hand", "raise", room, "--token", bobToken, "--json", "--server", server])
            #expect(try CLIWaitTests.json(raised.output)["member_id"] as? String == bobMember)
            #expect(try hands() == [bobMember])
            // The moderator lowers it over HTTP (the creator's token; the admin token works too).
            #expect(try CLITests.run(["hand", "lower", room, bobMember, "--server", server]).status == 2, "needs a token")
            #expect(try CLITests.run(["hand", "lower", room, bobMember, "--token", aliceToken, "--server", server]).status == 0)
            #expect(try hands().isEmpty)
            #expect(try CLITests.run(["hand", "wave", room, "--token", bobToken, "--server", server]).status == 2)

            // Roles: bob (not the creator) may not; the role must be one of three; the creator puts bob on stage.
            #expect(try CLITests.run(["role", "set", room, bobMember, "speaker", "--token", bobToken, "--server", server]).status == 1)
            #expect(try CLITests.run(["role", "set", room, bobMember, "star", "--token", aliceToken, "--server", server]).status == 2)
            #expect(try CLITests.run(["role", "set", room, bobMember, "--token", aliceToken, "--server", server]).status == 2)
            #expect(joiner.process.isRunning, "not promoted yet")
            #expect(try CLITests.run(["role", "set", room, bobMember, "speaker", "--token", aliceToken, "--server", server]).status == 0)
            #expect(joiner.waitForExit(timeout: 10) == 0, "its --until member:role member=me role=speaker")
            let printed = joiner.remainingOutput()
            #expect(printed.components(separatedBy: #""type":"member:hand""#).count - 1 == 4, "raise, lower, raise, lower: \(printed)")
            // An admin may too.
            let carol = try TestWebSocket(app, name: "carol")
            let carolMember = try #require(try carol.join(room)["member_id"] as? String)
            let promoted = try CLITests.run(["role", "set", room, carolMember, "moderator", "--admin-token", AdminTests.adminToken,
                                             "--json", "--server", server])
            #expect(promoted.output.contains(#""role":"moderator""#), "\(promoted.output)")
            #expect((try carol.event("member:role", in: room, member: carolMember)["body"] as? [String: Any])?["role"] as? String == "moderator")
        }
    }

    /// SIGUSR1 cuts the connection and holds the reconnect: released within the grace period the session resumes;
    /// held past it the others see member:left reason dropped and, released, join exits 1.
    @Test func signalsHoldReconnectsPastTheGracePeriod() throws {
        try withServer({ CLIScriptTests.testMode(&$0); $0.rooms.gracePeriod = .seconds(2) }) { app in
            let room = try createRoom(app)
            let alice = try TestWebSocket(app, name: "alice")
            _ = try alice.join(room)

            let (bob, bobMember) = try CLIScriptTests.join(room, as: "bob", ["--json"], port: app.port)
            kill(bob.process.processIdentifier, SIGUSR1)
            #expect(try CLIScriptTests.line(containing: "session:", from: bob).contains("session:held"))
            #expect(try CLIScriptTests.line(containing: "session:", from: bob).contains("session:reconnecting"))
            kill(bob.process.processIdentifier, SIGUSR2)
            #expect(try CLIScriptTests.line(containing: "session:", from: bob).contains("session:released"))
            let resumed = try CLIScriptTests.line(containing: "session:", from: bob)
            #expect(resumed.contains("session:resumed") && resumed.contains(#""lost":[]"#), "\(resumed)")

            kill(bob.process.processIdentifier, SIGUSR1)
            let left = try alice.event("member:left", in: room, member: bobMember)
            #expect((left["body"] as? [String: Any])?["reason"] as? String == "dropped")
            #expect(bob.process.isRunning, "held, not given up")
            kill(bob.process.processIdentifier, SIGUSR2)
            #expect(bob.waitForExit(timeout: 15) == 1)
            #expect(bob.remainingOutput().contains("session:ended"))

            // --hold-reconnects holds from the start: a server-side drop keeps carol away until SIGUSR2.
            let (carol, carolMember) = try CLIScriptTests.join(room, as: "carol", ["--json", "--hold-reconnects"], port: app.port)
            #expect(try CLITests.run(["drop", room, carolMember, "--admin-token", AdminTests.adminToken,
                                      "--server", "http://127.0.0.1:\(app.port)"]).status == 0)
            let carolLeft = try alice.event("member:left", in: room, member: carolMember)
            #expect((carolLeft["body"] as? [String: Any])?["reason"] as? String == "dropped")
            kill(carol.process.processIdentifier, SIGUSR2)
            #expect(carol.waitForExit(timeout: 15) == 1)
        }
    }
}

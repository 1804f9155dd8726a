#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ParlorApp

/// `parlor watch` and `parlor join` waits as scripts use them (issue 39 item 3): from now by default, --since for
/// history, --until filters, several conditions and --count, and never the caller's own join.
@Suite struct CLIWaitTests {
    typealias Child = ExecutableTests.Child

    static func json(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test func watchStartsFromNowAndSinceReadsHistory() throws {
        try withServer { app in
            let server = "http://127.0.0.1:\(app.port)"
            let room = try createRoom(app)
            let alice = try TestWebSocket(app, name: "alice")
            _ = try alice.join(room)  // event 1

            let watcher = try CLIScriptTests.child(["watch", room, "--json", "--server", server])
            let watching = try Self.json(try watcher.readLine())
            #expect(watching["type"] as? String == "watching" && watching["cid"] as? String == room)
            #expect(watching["after"] as? Int == 1 && watching["last_event_id"] as? Int == 1, "from now: \(watching)")
            let bob = try TestWebSocket(app, name: "bob")
            _ = try bob.join(room)  // event 2
            let next = try Self.json(try watcher.readLine())
            #expect(next["id"] as? Int == 2, "the first event printed is the first after the watch: \(next)")
            kill(watcher.process.processIdentifier, SIGTERM)
            #expect(watcher.waitForExit(timeout: 10) == 0)

            // From now, alice's join is history and never matches; --since start or --since 0 reads it.
            let fromNow = try CLITests.runCapturingErrors(["watch", room, "--until", "member:joined user=alice", "--timeout", "0.5", "--server", server])
            #expect(fromNow.status == 4)
            #expect(fromNow.errors.contains("'member:joined user=alice' (seen 0 of 1)"), "\(fromNow.errors)")
            let fromStart = try CLITests.run(["watch", room, "--since", "start", "--until", "member:joined user=alice", "--timeout", "5", "--server", server])
            #expect(fromStart.status == 0)
            let afterOne = try CLITests.run(["watch", room, "--json", "--since", "1", "--until", "member:joined", "--timeout", "5", "--server", server])
            #expect(afterOne.status == 0)
            let lines = afterOne.output.split(separator: "\n").map(String.init)
            #expect(lines.count == 2 && lines[1].contains(#""id":2"#) && lines[1].contains("bob"), "only what follows event 1: \(lines)")
            #expect(try CLITests.run(["watch", room, "--since", "-1", "--server", server]).status == 2)
            #expect(try CLITests.run(["watch", room, "--since", "yesterday", "--server", server]).status == 2)
        }
    }

    @Test func untilFiltersByFieldsAndCombinesConditions() throws {
        try withServer { app in
            let server = "http://127.0.0.1:\(app.port)"
            let room = try createRoom(app)
            let alice = try TestWebSocket(app, name: "alice")
            _ = try alice.join(room)
            let carol = try TestWebSocket(app, name: "carol")
            let carolMember = try #require(try carol.join(room)["member_id"] as? String)
            _ = try carol.call("conversation:leave", ["cid": room])  // reason left

            func watch(_ conditions: [String], timeout: String = "5") throws -> (status: Int32, errors: String) {
                try CLITests.runCapturingErrors(["watch", room, "--since", "start"] + conditions.flatMap { ["--until", $0] }
                                                + ["--timeout", timeout, "--server", server])
            }
            #expect(try watch(["member:left reason=left user=carol"]).status == 0)
            #expect(try watch(["member:left member=\(carolMember) reason=left"]).status == 0)
            #expect(try watch(["member:left reason=dropped"], timeout: "0.5").status == 4, "filters must all hold")
            #expect(try watch(["member:left user=alice"], timeout: "0.5").status == 4)
            // Several --until: all of them, in any order.
            #expect(try watch(["member:left user=carol", "member:joined user=alice"]).status == 0)
            let half = try watch(["member:joined user=alice", "member:joined user=dan"], timeout: "0.5")
            #expect(half.status == 4)
            #expect(half.errors.contains("'member:joined user=dan' (seen 0 of 1)") && !half.errors.contains("user=alice'"), "\(half.errors)")
            // --any: the first one met is enough. --count: each condition that many times.
            let any = try CLITests.run(["watch", room, "--since", "start", "--until", "member:joined user=dan", "--until", "member:left",
                                        "--any", "--timeout", "5", "--server", server])
            #expect(any.status == 0)
            #expect(try CLITests.run(["watch", room, "--since", "start", "--until", "member:joined", "--count", "2", "--timeout", "5",
                                      "--server", server]).status == 0)
            let three = try CLITests.runCapturingErrors(["watch", room, "--since", "start", "--until", "member:joined", "--count", "3",
                                                         "--timeout", "0.5", "--server", server])
            #expect(three.status == 4 && three.errors.contains("(seen 2 of 3)"), "\(three.errors)")

            // Bad conditions are usage errors, before anything connects.
            for bad in [["--until", "member:leave"], ["--until", "member:left colour=red"], ["--until", "member:left reason"],
                        ["--until", "reason=left"], ["--until", "member:left member=me"], ["--until", "member:left", "--count", "0"],
                        ["--count", "2"], ["--any"], ["--timeout", "1"], ["--until", "member:left", "--timeout", "-1"]] {
                let refused = try CLITests.runCapturingErrors(["watch", room, "--server", server] + bad)
                #expect(refused.status == 2, "\(bad)")
                #expect(!refused.errors.isEmpty, "\(bad)")
            }
        }
    }

    @Test func joinNeverMatchesItsOwnJoin() throws {
        try withServer { app in
            let room = try createRoom(app)
            let alice = try TestWebSocket(app, name: "alice")
            _ = try alice.join(room)

            // Bob's first join here: with --since start his own member:joined is in the history, and does not count.
            let (ownHistory, _) = try CLIScriptTests.join(room, as: "bob", ["--since", "start", "--until", "member:joined user=bob",
                                                                             "--timeout", "0.5"], port: app.port)
            #expect(ownHistory.waitForExit(timeout: 10) == 4)
            // Alone in the wait, bob's own member:joined does not count either, though it is printed.
            let (lonely, _) = try CLIScriptTests.join(room, as: "bob", ["--until", "member:joined", "--timeout", "0.5"], port: app.port)
            #expect(lonely.waitForExit(timeout: 10) == 4)
            #expect(lonely.remainingOutput().contains(#""type":"member:joined""#), "it is still printed")
            // Alice's join in the history does count with --since start.
            let (history, _) = try CLIScriptTests.join(room, as: "bob", ["--since", "start", "--until", "member:joined user=alice",
                                                                          "--timeout", "5"], port: app.port)
            #expect(history.waitForExit(timeout: 10) == 0)

            // Someone else's join after bob's does; the "joined" line says where bob's wait starts.
            let waiter = try CLIScriptTests.child(["join", room, "--as", "bob", "--until", "member:joined user=carol", "--timeout", "10",
                                                   "--server", "http://127.0.0.1:\(app.port)"])
            let joined = try Self.json(try waiter.readLine())
            let start = try #require(joined["last_event_id"] as? Int)
            let carol = try TestWebSocket(app, name: "carol")
            let carolJoin = try #require(try carol.join(room)["last_event_id"] as? Int)
            #expect(carolJoin > start, "bob's own join is the start point")
            #expect(waiter.waitForExit(timeout: 10) == 0)
        }
    }

    @Test func readyFileAnnouncesTheListeningURL() throws {
        try withTemporaryDirectory { directory in
            let ready = directory + "/ready"
            try Data("stale\n".utf8).write(to: URL(fileURLWithPath: ready))  // an earlier run's file must go first
            let server = try ServerProcess(["--ready-file", ready])
            let url = "http://127.0.0.1:\(server.port)\n"
            // Written just after the listening line: a short deadline on the file, as a script would wait.
            #expect(server.eventually(timeout: 10) { (try? String(contentsOfFile: ready, encoding: .utf8)) == url })
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory)
            #expect(leftovers == ["ready"], "no temporary file left: \(leftovers)")
            kill(server.pid, SIGTERM)
            #expect(server.child.waitForExit(timeout: 10) == 0)
            #expect(!FileManager.default.fileExists(atPath: ready), "removed at a clean stop")

            let unwritable = try CLITests.runCapturingErrors(["serve", "--port", "0", "--database", ":memory:", "--host", "127.0.0.1",
                                                              "--ready-file", directory + "/no/such/dir/ready"])
            #expect(unwritable.status == 1)
            #expect(unwritable.errors.contains("--ready-file"), "\(unwritable.errors)")
            #expect(try CLITests.run(["serve", "--port", "0", "--database", ":memory:", "--ready-file"]).status == 2)
            let help = try CLITests.run(["serve", "--help"]).output
            #expect(help.contains("--ready-file") && help.contains("PARLOR_READY_FILE"))
        }
    }
}

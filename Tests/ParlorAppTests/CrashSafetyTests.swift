#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ParlorStore

/// The real binary killed with SIGKILL during join/leave churn, then restarted on the same database, and stopped
/// with SIGTERM while clients are connected: nothing delivered is lost, ids stay gap-free, no ghost survives.
@Suite struct CrashSafetyTests {
    typealias Child = ExecutableTests.Child

    static func start(_ database: String, in directory: String, grace: String = "0.3") throws -> (Child, Int) {
        let child = try Child(["serve", "--host", "127.0.0.1", "--port", "0", "--database", database,
                               "--jwt-secret", "crash-safety-secret-0123456789", "--grace-period", grace,
                               "--auth-rate", "0", "--message-rate", "0", "--max-connections-per-ip", "0"], in: directory)
        return (child, try ExecutableTests.port(fromListeningLine: try child.readLine()))
    }

    /// POST /auth on the child server; the token.
    static func authToken(port: Int, name: String) throws -> String {
        try auth(port: port, name: name).jwt
    }

    /// Every event of a room from GET /rooms/{id}/events, all pages.
    static func history(port: Int, room: String) throws -> [[String: Any]] {
        var events: [[String: Any]] = []
        var since = 0
        while true {
            let connection = try RawConnection(port: port)
            try connection.send("GET /rooms/\(room)/events?since=\(since)&page_size=1000 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let page = try connection.readResponse().object
            events += page["events"] as? [[String: Any]] ?? []
            guard let cursor = page["cursor"] as? String, let next = Int(cursor) else { return events }
            since = next
        }
    }

    @Test func sigkillDuringChurnLosesNothing() throws {
        try withTemporaryDirectory { directory in
            let database = directory + "/parlor.db"
            var (child, port) = try Self.start(database, in: directory)
            let roomIDs = try (0..<4).map { index -> String in
                let connection = try RawConnection(port: port)
                let body = #"{"display_name":"crash \#(index)"}"#
                try connection.send("POST /rooms HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
                return try #require(try connection.readResponse().object["id"] as? String)
            }
            let clients = WorkerShared(try (0..<40).map { index in
                try TestWebSocket(port: port, token: try Self.authToken(port: port, name: "crash\(index)"))
            })
            // Churn from 4 workers; the kill lands in the middle of it.
            let pid = child.process.processIdentifier
            let killer = DispatchWorkItem { kill(pid, SIGKILL) }
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.6, execute: killer)
            DispatchQueue.concurrentPerform(iterations: 4) { worker in
                let room = roomIDs[worker]
                var joined = Array(repeating: false, count: 10)
                for step in 0..<10_000 {
                    let index = step % 10
                    let client = clients.value[worker * 10 + index]
                    do {
                        _ = try client.call(joined[index] ? "conversation:leave" : "conversation:join", ["cid": room])
                        joined[index].toggle()
                    } catch {
                        return  // the server is gone
                    }
                }
            }
            #expect(child.waitForExit(timeout: 10) == -SIGKILL)

            (child, port) = try Self.start(database, in: directory)
            // Watch each room until every membership left JOINED by the crash has dropped.
            let watcher = try TestWebSocket(port: port, token: try Self.authToken(port: port, name: "watcher"))
            for room in roomIDs {
                let joinedAtStart = members(try watcher.join(room)).compactMap { $0["member_id"] as? String }
                    .filter { $0 != watcher.lastJoinReplyMember(room) }
                for member in joinedAtStart {
                    let left = try watcher.event("member:left", in: room, member: member)
                    #expect((left["body"] as? [String: Any])?["reason"] as? String == "dropped")
                }
                _ = try watcher.call("conversation:leave", ["cid": room])
            }

            for room in roomIDs {
                let history = try Self.history(port: port, room: room)
                let ids = history.compactMap { $0["id"] as? Int }
                #expect(ids == Array(1...max(1, ids.count)).prefix(ids.count).map { $0 }, "ids of \(room) have a gap or a repeat")
                let stored = Dictionary(uniqueKeysWithValues: history.compactMap { event -> (Int, String)? in
                    guard let id = event["id"] as? Int else { return nil }
                    return (id, "\(event["type"] ?? "")|\((event["body"] as? [String: Any])?["member_id"] ?? "")")
                })
                // Every event any client received is in the history, the same.
                for client in clients.value {
                    for message in client.log where message["cid"] as? String == room {
                        guard let id = message["id"] as? Int else { continue }
                        let seen = "\(message["type"] ?? "")|\((message["body"] as? [String: Any])?["member_id"] ?? "")"
                        #expect(stored[id] == seen, "event \(id) of \(room) was delivered but is not in the history")
                    }
                }
                // No member stays JOINED beyond the grace period.
                let connection = try RawConnection(port: port)
                try connection.send("GET /rooms/\(room)/members HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                #expect(members(try connection.readResponse().object).isEmpty)
            }
            kill(child.process.processIdentifier, SIGTERM)
            #expect(child.waitForExit() == 0)

            let check = try Database(DatabaseConfiguration(path: database))
            defer { check.close() }
            #expect(try check.read { try $0.queryOne("PRAGMA integrity_check")?.string("integrity_check") } == "ok")
        }
    }

    @Test func sigtermClosesWith1001AndClientsResumeAfterRestart() throws {
        try withTemporaryDirectory { directory in
            let database = directory + "/parlor.db"
            var (child, port) = try Self.start(database, in: directory, grace: "10")
            let connection = try RawConnection(port: port)
            try connection.send("POST /rooms HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 20\r\n\r\n{\"display_name\":\"x\"}")
            let room = try #require(try connection.readResponse().object["id"] as? String)
            var sessions: [(name: String, claim: String, session: String, last: Int)] = []
            var sockets: [(claim: String, socket: TestWebSocket)] = []
            for name in ["ann", "bo"] {
                let grant = try auth(port: port, name: name)
                let socket = try TestWebSocket(port: port, token: grant.jwt)
                _ = try socket.join(room)
                sockets.append((grant.claim, socket))
            }
            for (name, (claim, socket)) in zip(["ann", "bo"], sockets) {
                try socket.sync()
                sessions.append((name, claim, socket.sessionID, socket.lastEventIDs[room] ?? 0))
            }
            kill(child.process.processIdentifier, SIGTERM)
            for (_, socket) in sockets { #expect(try socket.closeCode() == 1001) }
            #expect(child.waitForExit() == 0)

            (child, port) = try Self.start(database, in: directory, grace: "10")
            for entry in sessions {
                // The clients come back with their claims: their memberships are in live use (the grace period).
                let socket = try TestWebSocket(port: port, token: try auth(port: port, name: entry.name, claim: entry.claim).jwt)
                let resumed = try socket.call("session:resume", ["session_id": entry.session, "last_event_ids": [room: entry.last]])
                #expect((resumed["resumed"] as? [[String: Any]])?.count == 1)
            }
            let types = try Self.history(port: port, room: room).compactMap { $0["type"] as? String }
            #expect(types == ["member:joined", "member:joined"], "no member:left across a graceful restart")
            kill(child.process.processIdentifier, SIGTERM)
            #expect(child.waitForExit() == 0)
        }
    }
}

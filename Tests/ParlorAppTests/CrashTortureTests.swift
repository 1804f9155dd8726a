#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ParlorStore

/// Crash consistency of the store under its two SQLite shims (wal_batch.c writes a commit's WAL frames in one
/// pwrite; page_cache.c parks pages): the real binary commits joins and leaves under load and is killed with SIGKILL
/// at a random moment, again and again on one database. After every kill, before anything else opens the file,
/// `PRAGMA integrity_check` must be `ok` and every join and leave the server acknowledged must be in the database:
/// a shim that published a commit before its frames reached the file would lose acknowledged joins silently.
/// `PARLOR_CRASH_KILLS` sets the number of kills (default 200, about a minute and a half).
@Suite struct CrashTortureTests {
    typealias Child = ExecutableTests.Child

    /// What the server acknowledged before it died: member ids whose join succeeded, and those whose leave did.
    final class Acknowledged: @unchecked Sendable {  // guarded by `lock`; appended from the churn workers
        private let lock = NSLock()
        private(set) var joined: [String] = []
        private(set) var left: [String] = []
        func add(joined member: String) { lock.withLock { joined.append(member) } }
        func add(left member: String) { lock.withLock { left.append(member) } }
        var count: Int { lock.withLock { joined.count + left.count } }
    }

    static var kills: Int { Int(ProcessInfo.processInfo.environment["PARLOR_CRASH_KILLS"] ?? "") ?? 200 }

    @Test(.timeLimit(.minutes(10))) func acknowledgedCommandsSurviveRepeatedSIGKILL() throws {
        try withTemporaryDirectory { directory in
            let database = directory + "/parlor.db"
            var (child, port) = try CrashSafetyTests.start(database, in: directory)
            let names = (0..<8).map { "torture\($0)" }
            // Tokens outlive restarts (same secret, same database): fetched once.
            let tokens = try names.map { try auth(port: port, name: $0).jwt }
            let rooms = try (0..<2).map { index -> String in
                let connection = try RawConnection(port: port)
                let body = #"{"display_name":"torture \#(index)","properties":{"ttl":3600}}"#
                try connection.send("POST /rooms HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
                return try #require(try connection.readResponse().object["id"] as? String)
            }
            var totalAcknowledged = 0
            var killsDuringChurn = 0
            for kill in 0..<Self.kills {
                if kill > 0 { (child, port) = try CrashSafetyTests.start(database, in: directory) }
                let acknowledged = Acknowledged()
                let clients = WorkerShared(try tokens.map { try TestWebSocket(port: port, token: $0) })
                let pid = child.process.processIdentifier
                // Somewhere in the first 150 ms of churn: early commits, group commits and checkpoints all get hit.
                let delay = Double.random(in: 0.005...0.150)
                DispatchQueue.global().asyncAfter(deadline: .now() + delay) { Glibc.kill(pid, SIGKILL) }
                DispatchQueue.concurrentPerform(iterations: 4) { worker in
                    let mine = [clients.value[worker * 2], clients.value[worker * 2 + 1]]
                    let room = rooms[worker % 2]
                    var member: [String?] = [nil, nil]
                    for step in 0..<100_000 {
                        let index = step % 2
                        do {
                            if let current = member[index] {
                                _ = try mine[index].call("conversation:leave", ["cid": room])
                                acknowledged.add(left: current)
                                member[index] = nil
                            } else {
                                let body = try mine[index].call("conversation:join", ["cid": room])
                                guard let id = body["member_id"] as? String else { return }
                                acknowledged.add(joined: id)
                                member[index] = id
                            }
                        } catch {
                            return  // the server is gone
                        }
                    }
                }
                #expect(child.waitForExit(timeout: 10) == -SIGKILL, "kill \(kill): the server did not die of SIGKILL")
                if acknowledged.count > 0 { killsDuringChurn += 1 }
                totalAcknowledged += acknowledged.count
                try Self.check(database, acknowledged, kill: kill)
            }
            // The kills landed while commits were being acknowledged, not before the churn began.
            #expect(killsDuringChurn >= Self.kills * 9 / 10, "only \(killsDuringChurn) of \(Self.kills) kills hit the churn")
            #expect(totalAcknowledged >= Self.kills * 10, "only \(totalAcknowledged) acknowledged commands in \(Self.kills) runs")
        }
    }

    /// Opens the killed server's database as it is (SQLite recovers the WAL) and checks it against the acknowledgements.
    static func check(_ path: String, _ acknowledged: Acknowledged, kill: Int) throws {
        var configuration = DatabaseConfiguration(path: path, readerCount: 1)
        configuration.appliesMigrations = false
        let database = try Database(configuration)
        defer { database.close() }
        try database.read { connection in
            let integrity = try connection.queryOne("PRAGMA integrity_check")?.string("integrity_check")
            #expect(integrity == "ok", "kill \(kill): integrity_check says \(integrity ?? "nothing")")
            for member in acknowledged.joined {
                let row = try connection.queryOne("SELECT state FROM members WHERE id = ?", [.text(member)])
                #expect(row != nil, "kill \(kill): the acknowledged join of \(member) is not in the database")
            }
            for member in acknowledged.left {
                let state = try connection.queryOne("SELECT state FROM members WHERE id = ?", [.text(member)])?.string("state")
                #expect(state == "LEFT", "kill \(kill): the acknowledged leave of \(member) is not in the database (\(state ?? "no row"))")
            }
            // Event ids stay gap-free per room whatever the kill interrupted.
            let rows = try connection.query("SELECT room_id, count(*) AS n, max(seq) - min(seq) + 1 AS span FROM events GROUP BY room_id")
            for row in rows {
                #expect(row.int("n") == row.int("span"), "kill \(kill): events of \(row.string("room_id") ?? "?") have a gap")
            }
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorApp
import ParlorPostgres
import PostgresTestCluster
import Testing

/// PostgreSQL restarted under load with three nodes on it (issue 11): on a cluster of the test's own, since the shared
/// one serves the tests running beside it. Requests during the outage get clear errors; afterwards every node serves
/// again by itself, the listening connections are back, and no acknowledged event is lost or sent twice.
@Suite struct ClusterRestartTests {
    @Test func postgresRestartedUnderLoadNodesReconnectByThemselvesAndNothingIsLost() throws {
        let postgres = try TestPostgres.makePrivate()
        defer { postgres.remove() }
        let url = try postgres.makeDatabase()
        // A lease well beyond the outage: nobody is taken over; a long grace period: nobody drops.
        let (lease, grace) = (10.0, 30.0)
        let a = try ClusterTests.node(url, lease: lease, grace: grace)
        defer { a.shutdown() }
        let b = try ClusterTests.node(url, lease: lease, grace: grace)
        defer { b.shutdown() }
        let directory = NSTemporaryDirectory() + "parlor-restart-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let child = try ExecutableTests.Child(["serve", "--host", "127.0.0.1", "--port", "0", "--database", url.string,
                                               "--node-lease", "\(lease)", "--grace-period", "\(grace)",
                                               "--message-rate", "0", "--frame-rate", "0", "--auth-rate", "0"], in: directory)
        defer {
            kill(child.process.processIdentifier, SIGTERM)
            _ = child.waitForExit(timeout: 10)
        }
        let ports = [a.port, b.port, try ExecutableTests.port(fromListeningLine: try child.readLine())]
        let rooms = [try createRoom(a, "Restart one"), try createRoom(b, "Restart two")]

        // A watcher on each node in both rooms throughout, and an idle probe client on each node.
        var watchers: [(socket: TestWebSocket, joinedAt: [String: Int])] = []
        var probes: [(socket: TestWebSocket, token: String)] = []
        for (index, port) in ports.enumerated() {
            let watcher = try TestWebSocket(port: port, token: try auth(port: port, name: "watcher\(index)").jwt, timeout: 20)
            var joinedAt: [String: Int] = [:]
            for room in rooms { joinedAt[room] = try #require(try watcher.join(room)["last_event_id"] as? Int) }
            watchers.append((watcher, joinedAt))
            let token = try auth(port: port, name: "probe\(index)").jwt
            probes.append((try TestWebSocket(port: port, token: token, timeout: 20), token))
        }

        // Two clients per node join and leave the rooms in turn until told to stop.
        let churn = Churn()
        // Should an expectation throw while PostgreSQL is down, the clients must not wait for it forever.
        defer {
            churn.stop()
            churn.setUp(true)
        }
        let group = DispatchGroup()
        for (index, port) in ports.enumerated() {
            for client in 0..<2 {
                let token = try auth(port: port, name: "churn\(index)-\(client)").jwt
                group.enter()
                Thread {
                    defer { group.leave() }
                    churn.run(port: port, token: token, rooms: client == 0 ? rooms : rooms.reversed())
                }.start()
            }
        }

        // In the middle of the churn, PostgreSQL stops (fast: every session ends, open transactions roll back). Every
        // client has its session first: one still connecting during the outage is refused (503), rightly, and on a
        // loaded machine the others can reach 60 before the last thread has connected.
        #expect(churn.waitForAcknowledged(atLeast: 60, clients: ports.count * 2), "the churn got going: \(churn.failures)")
        churn.setUp(false)
        try postgres.stop()
        for (index, port) in ports.enumerated() {
            let health = try RawConnection.oneRequest(port, "GET", "/healthz")
            #expect(health.status == 503 && health.text.contains("unavailable"), "node \(index): \(health.status) \(health.text)")
            let refused = try probes[index].socket.request("conversation:join", ["cid": rooms[0]])
            #expect(errorCode(refused) == "server:error:unavailable", "node \(index): \(refused)")
            let read = try RawConnection.oneRequest(port, "GET", "/rooms/\(rooms[0])/events",
                                                    headers: ["Authorization": "Bearer \(probes[index].token)"])
            #expect(read.status == 503, "node \(index): \(read.status) \(read.text)")
            let authorised = try RawConnection.oneRequest(port, "POST", "/auth", json: #"{"name":"during-outage"}"#)
            #expect(authorised.status == 503, "node \(index): \(authorised.status) \(authorised.text)")
        }
        // Started again on the same port: every node serves at once, without a restart of its own.
        try postgres.start()
        for (index, port) in ports.enumerated() {
            let health = try RawConnection.oneRequest(port, "GET", "/healthz")
            #expect(health.status == 200, "node \(index): \(health.status) \(health.text)")
        }
        let acknowledgedAtRestart = churn.acknowledged
        churn.setUp(true)
        #expect(churn.waitForAcknowledged(atLeast: acknowledgedAtRestart + 60), "the churn went on: \(churn.failures)")
        churn.stop()
        group.wait()
        #expect(churn.failures.isEmpty)

        // New joins work on every node, and reach the watchers of the other nodes: the listening connections are back.
        var newcomers: [String] = []
        for (index, port) in ports.enumerated() {
            let name = "newcomer\(index)"
            let newcomer = try TestWebSocket(port: port, token: try auth(port: port, name: name).jwt)
            for room in rooms {
                let member = try #require(try newcomer.join(room)["member_id"] as? String)
                for (watcher, _) in watchers { _ = try watcher.event("member:joined", in: room, member: member) }
            }
            newcomers.append(name)
        }

        // Each room's stored ids are gap-free, and each watcher received every one from its join on, once, in order.
        let admin = try PostgresConnection(url: url)
        for room in rooms {
            let stored = try admin.query("SELECT seq FROM events WHERE room_id = $1 ORDER BY seq", [.text(room)]).compactMap { $0.int("seq") }
            let head = Int(stored.last ?? 0)
            #expect(stored == Array(1...Int64(head)))
            for (index, (watcher, joinedAt)) in watchers.enumerated() {
                let first = try #require(joinedAt[room])
                #expect(watcher.eventIDs[room] == Array(first...head), "watcher \(index) in \(room)")
            }
        }
        // Every acknowledged join and leave is stored, once; nobody is JOINED but the watchers and the newcomers.
        let (joined, left) = churn.members
        // Each client ends on a leave, so joins are half the acknowledged requests: at least 60.
        #expect(joined.count >= 60 && Set(left) == Set(joined), "every churn member acknowledged both ways")
        for (type, members) in [("member:joined", joined), ("member:left", left)] {
            let counts = try admin.query("""
                SELECT from_member, COUNT(*) AS n FROM events WHERE type = $1 AND from_member = ANY(string_to_array($2, ' '))
                GROUP BY from_member
                """, [.text(type), .text(members.joined(separator: " "))])
            #expect(counts.count == Set(members).count && counts.allSatisfy { $0.int("n") == 1 }, "\(type): each stored once")
        }
        for room in rooms {
            let names = try admin.query("""
                SELECT u.name FROM members m JOIN users u ON u.id = m.user_id WHERE m.room_id = $1 AND m.state = 'JOINED' ORDER BY u.name
                """, [.text(room)]).compactMap { $0.string("name") }
            #expect(names == (newcomers + (0..<3).map { "watcher\($0)" }).sorted())
        }
        #expect(try admin.queryOne("SELECT COUNT(*) AS n FROM events WHERE body LIKE '%dropped%'")?.int("n") == 0)
        #expect(try admin.queryOne("SELECT COUNT(*) AS n FROM nodes")?.int("n") == 3, "nobody was taken over")
    }
}

/// What the churn clients saw, shared by their threads; while PostgreSQL is down they wait for it to be back.
private final class Churn: @unchecked Sendable {  // every field is read and written holding `condition`
    private let condition = NSCondition()
    private var isUp = true
    private var stopping = false
    private var count = 0
    private var connected = 0
    private var joined: [String] = []
    private var left: [String] = []
    private var errors: [String] = []

    var acknowledged: Int { locked { count } }
    var failures: [String] { locked { errors } }
    /// The members whose join, and whose leave, was acknowledged.
    var members: (joined: [String], left: [String]) { locked { (joined, left) } }

    func setUp(_ up: Bool) { locked { isUp = up } }
    func stop() { locked { stopping = true } }

    /// Waits (at most 60 s) until `target` requests were acknowledged and `clients` clients had their session, or a
    /// client failed.
    func waitForAcknowledged(atLeast target: Int, clients: Int = 0) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(60)
        while count < target || connected < clients, errors.isEmpty {
            guard condition.wait(until: deadline) else { return false }
        }
        return count >= target && connected >= clients
    }

    /// One client on `port`: joins a room and leaves it, the next room, and so on, until `stop()`.
    func run(port: Int, token: String, rooms: [String]) {
        do {
            let client = try TestWebSocket(port: port, token: token, timeout: 20)
            locked { connected += 1 }
            var round = 0
            while !locked({ stopping }) {
                let room = rooms[round % rooms.count]
                round += 1
                guard let member = try request(client, "conversation:join", room)["member_id"] as? String else {
                    throw TestFailure("a join without member_id")
                }
                locked { joined.append(member) }
                _ = try request(client, "conversation:leave", room)
                locked { left.append(member) }
            }
        } catch {
            locked { errors.append("\(error)") }
        }
    }

    /// The request's reply body once it succeeds. `server:error:unavailable` (PostgreSQL is down) waits until it is
    /// back and asks again; a leave cut during its commit may have committed, so "not joined" then means done.
    private func request(_ client: TestWebSocket, _ type: String, _ room: String) throws -> [String: Any] {
        var refused = false
        for _ in 0..<100 {
            let reply = try client.request(type, ["cid": room])
            if reply["type"] as? String == type + ":success" {
                locked { count += 1 }
                return reply["body"] as? [String: Any] ?? [:]
            }
            switch errorCode(reply) {
            case "server:error:unavailable":
                refused = true
                condition.lock()
                while !isUp { condition.wait() }
                condition.unlock()
            case "member:error:not-joined" where refused && type == "conversation:leave":
                locked { count += 1 }
                return [:]
            default:
                throw TestFailure("\(type) in \(room): \(reply)")
            }
        }
        throw TestFailure("\(type) in \(room) still unavailable after 100 attempts")
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return try body()
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorApp
import ParlorLoop
import ParlorPostgres
import PostgresTestCluster
import Testing

/// Several Parlor nodes on one PostgreSQL database (issue 11, phase 2): members of one room on different nodes see
/// the same events with the same ids, a killed node's members are taken over (resumed elsewhere, or dropped once),
/// and nodes starting together migrate once. Leases and grace periods are short so each test takes seconds.
@Suite struct ClusterTests {
    /// A node on `url`: the JWT secret is the database's, so a token from one node is valid on every node.
    private static let admin = "admin-token-for-cluster-tests-0123456789"

    static func node(_ url: PostgresURL, lease: Double = 5, grace: Double = 5,
                             _ configure: (inout AppConfiguration) -> Void = { _ in }) throws -> ParlorApplication {
        var configuration = AppConfiguration.testing()
        configuration.adminToken = admin
        configuration.databasePath = url.string
        configuration.jwtSecret = nil
        configuration.dataDirectory = NSTemporaryDirectory() + "/parlor-unused-\(UUID().uuidString)"
        configuration.rooms.nodeLease = .seconds(lease)
        configuration.rooms.gracePeriod = .seconds(grace)
        configure(&configuration)
        return try buildApplication(configuration)
    }

    /// Each room event a client saw as "id type member reason", in arrival order.
    private static func transcript(_ socket: TestWebSocket, _ room: String, from firstID: Int) -> [String] {
        socket.log.compactMap { message in
            guard message["cid"] as? String == room, let id = message["id"] as? Int, id >= firstID, let type = message["type"] as? String,
                  type.hasPrefix("member:") else { return nil }
            let body = message["body"] as? [String: Any] ?? [:]
            return "\(id) \(type) \(body["member_id"] as? String ?? "-") \(body["reason"] as? String ?? "-")"
        }
    }

    @Test func membersOfOneRoomOnThreeNodesSeeTheSameEventsAndHistory() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let nodes = try (0..<3).map { _ in try Self.node(url) }
        defer { nodes.forEach { $0.shutdown() } }
        let room = try createRoom(nodes[0], properties: #"{"max_members":3}"#)
        let alice = try TestWebSocket(nodes[0], name: "alice")
        let bob = try TestWebSocket(nodes[1], name: "bob")
        let carol = try TestWebSocket(nodes[2], name: "carol")
        #expect(try alice.join(room)["last_event_id"] as? Int == 1)
        let bobJoin = try bob.join(room)
        #expect(bobJoin["last_event_id"] as? Int == 2)
        let carolJoin = try carol.join(room)
        #expect(carolJoin["last_event_id"] as? Int == 3)
        #expect(memberNames(carolJoin) == ["alice", "bob", "carol"], "node 2 lists the members who joined on nodes 0 and 1")
        let bobMember = try #require(bobJoin["member_id"] as? String)
        let carolMember = try #require(carolJoin["member_id"] as? String)
        #expect(try alice.event("member:joined", in: room, member: carolMember)["id"] as? Int == 3)
        #expect(try bob.event("member:joined", in: room, member: carolMember)["id"] as? Int == 3)

        // max_members holds across nodes: the room is full whichever node is asked.
        let dave = try TestWebSocket(nodes[1], name: "dave")
        #expect(errorCode(try dave.request("conversation:join", ["cid": room])) == "room:error:full")

        _ = try bob.call("conversation:leave", ["cid": room])
        let daveJoin = try dave.join(room)
        #expect(daveJoin["last_event_id"] as? Int == 5)
        let daveMember = try #require(daveJoin["member_id"] as? String)
        for socket in [alice, carol] { _ = try socket.event("member:joined", in: room, member: daveMember) }
        _ = try carol.call("conversation:leave", ["cid": room])
        for socket in [alice, dave] { _ = try socket.event("member:left", in: room, member: carolMember) }

        // The same events with the same ids, whichever node delivered them (a ping's reply comes after them).
        for socket in [alice, bob, carol, dave] { try socket.sync() }
        let expected = ["4 member:left \(bobMember) left", "5 member:joined \(daveMember) -", "6 member:left \(carolMember) left"]
        #expect(Self.transcript(alice, room, from: 4) == expected)
        #expect(Self.transcript(carol, room, from: 4) == expected)
        #expect(Self.transcript(dave, room, from: 5) == Array(expected.dropFirst()))
        #expect(Self.transcript(bob, room, from: 3) == ["3 member:joined \(carolMember) -", "4 member:left \(bobMember) left"])
        #expect(alice.eventIDs[room] == [1, 2, 3, 4, 5, 6])

        // Every node returns the same history.
        let histories = try nodes.enumerated().map { index, node in
            let response = try http(node, "GET", "/rooms/\(room)/events", token: try token(node, "reader\(index)"))
            #expect(response.status == 200)
            return ((try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])?["events"] as? [[String: Any]] ?? [])
                .map { "\($0["id"] ?? "-") \($0["type"] ?? "-")" }
        }
        #expect(histories[0].count == 6)
        #expect(histories[1] == histories[0] && histories[2] == histories[0])
    }

    @Test func churnWithOneNodeKilledLosesNothingAndDropsItsMembersOnce() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let (lease, grace) = (2.0, 2.0)
        let a = try Self.node(url, lease: lease, grace: grace)
        defer { a.shutdown() }
        let b = try Self.node(url, lease: lease, grace: grace)
        defer { b.shutdown() }
        let directory = NSTemporaryDirectory() + "parlor-cluster-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let child = try ExecutableTests.Child(["serve", "--host", "127.0.0.1", "--port", "0", "--database", url.string,
                                               "--node-lease", "\(lease)", "--grace-period", "\(grace)"], in: directory)
        let cPort = try ExecutableTests.port(fromListeningLine: try child.readLine())

        let room = try createRoom(a)
        // Watchers on the two survivors stay joined throughout; their sockets wait long enough for lease + grace.
        let first = try TestWebSocket(port: a.port, token: try token(a, "first"), timeout: 20)
        let second = try TestWebSocket(port: b.port, token: try token(b, "second"), timeout: 20)
        _ = try first.join(room)
        _ = try second.join(room)
        let resumer = try auth(port: cPort, name: "resumer")
        let onKilled = try TestWebSocket(port: cPort, token: resumer.jwt)
        _ = try onKilled.join(room)
        let stays = try TestWebSocket(port: cPort, token: try auth(port: cPort, name: "stays").jwt)
        let staysMember = try #require(try stays.join(room)["member_id"] as? String)

        // Churn from clients spread over the three nodes: each joins and leaves in turn.
        var churners: [(TestWebSocket, onKilledNode: Bool)] = []
        var resumed: TestWebSocket?
        for index in 0..<3 {
            churners.append((try TestWebSocket(a, name: "churn-a\(index)"), false))
            churners.append((try TestWebSocket(b, name: "churn-b\(index)"), false))
            churners.append((try TestWebSocket(port: cPort, token: try auth(port: cPort, name: "churn-c\(index)").jwt), true))
        }
        for round in 0..<14 {
            if round == 6 {
                // kill -9 of the third node in the middle of the churn.
                kill(child.process.processIdentifier, SIGKILL)
                #expect(child.waitForExit(timeout: 10) != nil)
                churners.removeAll { $0.onKilledNode }
                // Its client comes back on another node and resumes: the missed events, no member:left.
                let back = try TestWebSocket(port: b.port, token: resumer.jwt)
                let reply = try back.call("session:resume", ["session_id": onKilled.sessionID,
                                                             "last_event_ids": [room: onKilled.lastEventIDs[room] ?? 0]])
                #expect((reply["resumed"] as? [[String: Any]])?.compactMap { $0["cid"] as? String } == [room])
                // It is sent what it missed, from the node it resumed on: every id after its last, once, in order.
                let head = try #require((reply["resumed"] as? [[String: Any]])?.first?["last_event_id"] as? Int)
                let missedFrom = (onKilled.lastEventIDs[room] ?? 0) + 1
                if head >= missedFrom {
                    _ = try back.next { $0["cid"] as? String == room && $0["id"] as? Int == head }
                    #expect(back.eventIDs[room] == Array(missedFrom...head))
                }
                resumed = back
            }
            for (socket, _) in churners {
                _ = try socket.join(room)
                _ = try socket.call("conversation:leave", ["cid": room])
            }
        }

        // The member left on the killed node drops once its lease and grace period are over, seen on both survivors.
        let dropped = try first.event("member:left", in: room, member: staysMember)
        #expect((dropped["body"] as? [String: Any])?["reason"] as? String == "dropped")
        #expect(try second.event("member:left", in: room, member: staysMember)["id"] as? Int == dropped["id"] as? Int)
        _ = try first.call("conversation:leave", ["cid": room])
        let last = try #require(try second.event("member:left", in: room, member: first.lastJoinReplyMember(room))["id"] as? Int)
        try first.sync()  // its own member:left comes after the leave's reply

        // No gap and no repeat in what the survivors' watchers received, and it is the stored history.
        let admin = try PostgresConnection(url: url)
        let stored = try admin.query("SELECT seq FROM events WHERE room_id = $1 ORDER BY seq", [.text(room)]).compactMap { $0.int("seq") }
        #expect(stored == Array(1...Int64(last)))
        let secondIDs = second.eventIDs[room] ?? []
        #expect(secondIDs == Array(2...last), "the second watcher saw every event from its join on, once, in order")
        #expect(first.eventIDs[room] ?? [] == Array(1...last))
        #expect(stored.count > 200, "hundreds of joins and leaves")
        let leaves = try admin.queryOne("SELECT COUNT(*) AS n FROM events WHERE room_id = $1 AND type = 'member:left' AND from_member = $2",
                                        [.text(room), .text(staysMember)])?.int("n")
        #expect(leaves == 1, "dropped exactly once")
        // Nobody stays JOINED but the second watcher and the client that resumed.
        let joined = try admin.query("""
            SELECT u.name FROM members m JOIN users u ON u.id = m.user_id WHERE m.room_id = $1 AND m.state = 'JOINED' ORDER BY u.name
            """, [.text(room)]).compactMap { $0.string("name") }
        #expect(joined == ["resumer", "second"])
        #expect(resumed != nil)
    }

    @Test func signallingReachesAMemberOnAnotherNodeAndIsNotKept() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let nodes = try (0..<2).map { _ in try Self.node(url) }
        defer { nodes.forEach { $0.shutdown() } }
        let room = try createRoom(nodes[0])
        let alice = try TestWebSocket(nodes[0], name: "alice")
        let bob = try TestWebSocket(nodes[1], name: "bob")
        let aliceMember = try #require(try alice.join(room)["member_id"] as? String)
        let bobMember = try #require(try bob.join(room)["member_id"] as? String)
        // An SDP larger than a NOTIFY may carry (8,000 bytes).
        let sdp = "v=0\r\n" + String(repeating: "a=candidate:1 1 udp 2122260223 192.0.2.1 54321 typ host\r\n", count: 250)
        #expect(sdp.utf8.count > 12_000)
        _ = try alice.call("rtc:offer", ["cid": room, "to": bobMember, "sdp": sdp])
        let offer = try bob.next { $0["type"] as? String == "rtc:offer" }
        #expect(offer["from"] as? String == aliceMember)
        #expect((offer["body"] as? [String: Any])?["sdp"] as? String == sdp)
        _ = try bob.call("rtc:answer", ["cid": room, "to": aliceMember, "sdp": "v=0 answer"])
        let answer = try alice.next { $0["type"] as? String == "rtc:answer" }
        #expect((answer["body"] as? [String: Any])?["sdp"] as? String == "v=0 answer")
        // Delivered, so gone: the rows are deleted in the batch that delivered them.
        let admin = try PostgresConnection(url: url)
        #expect(try admin.queryOne("SELECT COUNT(*) AS n FROM signals")?.int("n") == 0)
    }

    @Test func nodesWhoseConnectionsWereCutCatchUpWithoutLosingOrRepeatingEvents() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let nodes = try (0..<2).map { _ in try Self.node(url) }
        defer { nodes.forEach { $0.shutdown() } }
        let room = try createRoom(nodes[0])
        let alice = try TestWebSocket(nodes[0], name: "alice")
        let bob = try TestWebSocket(nodes[1], name: "bob")
        _ = try alice.join(room)
        _ = try bob.join(room)
        let admin = try PostgresConnection(url: url)
        for round in 0..<3 {
            // Every connection of both nodes is cut, the listening ones too (as by a PostgreSQL restart).
            let cut = try admin.query("""
                SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid()
                """)
            // At first: two writers, two listeners and the pools; later whatever reconnected since.
            #expect(cut.count >= (round == 0 ? 6 : 1))
            // Members come and go on both nodes meanwhile; each node reconnects by itself.
            let carol = try TestWebSocket(nodes[round % 2], name: "carol\(round)")
            let carolMember = try #require(try carol.join(room)["member_id"] as? String)
            _ = try carol.call("conversation:leave", ["cid": room])
            for socket in [alice, bob] { _ = try socket.event("member:left", in: room, member: carolMember) }
        }
        // alice saw every event once, in order; bob everything from its own join on.
        #expect(alice.eventIDs[room] == Array(1...8))
        #expect(bob.eventIDs[room] == Array(2...8))
    }

    @Test func aRevocationOnOneNodeClosesTheUsersConnectionsAndRefusesItsTokensOnTheOthers() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let nodes = try (0..<2).map { _ in try Self.node(url) }
        defer { nodes.forEach { $0.shutdown() } }
        let room = try createRoom(nodes[0])
        let watcher = try TestWebSocket(nodes[0], name: "watcher")
        _ = try watcher.join(room)
        let malloryToken = try token(nodes[1], "mallory")
        let mallory = try TestWebSocket(port: nodes[1].port, token: malloryToken)
        let malloryMember = try #require(try mallory.join(room)["member_id"] as? String)
        // Node 1 has the user cached: it served the upgrade and the join.
        #expect(try http(nodes[1], "GET", "/rooms", token: malloryToken).status == 200)

        #expect(try http(nodes[0], "POST", "/users/mallory/revoke", headers: ["Authorization": "Bearer \(Self.admin)"]).status == 200)
        let left = try watcher.event("member:left", in: room, member: malloryMember)
        #expect((left["body"] as? [String: Any])?["reason"] as? String == "kicked")
        #expect(try mallory.closeCode() == 4003, "closed by its own node, told by the node that revoked")
        #expect(try http(nodes[1], "GET", "/rooms", token: malloryToken).status == 401)
    }

    @Test func theOpenRoomsLimitHoldsAcrossNodesCreatingAtOnce() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let nodes = try (0..<2).map { _ in try Self.node(url) { $0.rooms.maxOpenRooms = 3 } }
        defer { nodes.forEach { $0.shutdown() } }
        let statuses = Locked<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            let status = (try? http(nodes[index % 2], "POST", "/rooms", json: #"{"display_name":"r\#(index)"}"#).status) ?? 0
            statuses.withLock { $0.append(status) }
        }
        #expect(statuses.withLock { $0 }.filter { $0 == 201 }.count == 3)
        let admin = try PostgresConnection(url: url)
        #expect(try admin.queryOne("SELECT COUNT(*) AS n FROM rooms WHERE closed_at IS NULL")?.int("n") == 3)
    }

    @Test func aNodeTakenOverWhileAliveClaimsBackTheMembersStillConnectedToIt() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let node = try Self.node(url, lease: 1, grace: 60)
        defer { node.shutdown() }
        let room = try createRoom(node)
        let alice = try TestWebSocket(node, name: "alice")
        let member = try #require(try alice.join(room)["member_id"] as? String)
        let admin = try PostgresConnection(url: url)
        let nodeID = try #require(try admin.queryOne("SELECT node_id FROM members WHERE id = $1", [.text(member)])?.string("node_id"))
        // What a survivor does when this node's lease has ended while the node is merely paused.
        try admin.execute("BEGIN")
        try admin.run("DELETE FROM nodes WHERE id = $1", [.text(nodeID)])
        try admin.run("UPDATE members SET node_id = 'NODE-survivor', disconnected_at = 1 WHERE id = $1", [.text(member)])
        try admin.execute("COMMIT")
        // The node's next heartbeat finds its row gone: it claims back the member, still connected to it.
        let deadline = Date().addingTimeInterval(10)
        var presence: (String?, Int64?) = ("NODE-survivor", 1)
        while Date() < deadline {
            let row = try admin.queryOne("SELECT node_id, disconnected_at FROM members WHERE id = $1 AND state = 'JOINED'", [.text(member)])
            presence = (row?.string("node_id"), row?.int("disconnected_at"))
            if presence.0 == nodeID { break }
            usleep(20_000)
        }
        #expect(presence.0 == nodeID && presence.1 == nil, "held by its node again, and present")
        #expect(try admin.queryOne("SELECT 1 AS found FROM nodes WHERE id = $1", [.text(nodeID)]) != nil, "its lease again")
        _ = try alice.call("session:ping")
    }

    @Test func twoNodesChangingTwoRoomsInOppositeOrdersRefuseNothing() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let nodes = try (0..<2).map { _ in try Self.node(url) }
        defer { nodes.forEach { $0.shutdown() } }
        let rooms = [try createRoom(nodes[0]), try createRoom(nodes[0])]
        let failures = Locked<[String]>([])
        // Clients of node 0 go room 0 then room 1, those of node 1 the other way round, all at once: batches of
        // both nodes hold both rooms' rows.
        let group = DispatchGroup()
        for index in 0..<16 {
            group.enter()
            Thread {
                defer { group.leave() }
                let order = index % 2 == 0 ? rooms : rooms.reversed()
                do {
                    let client = try TestWebSocket(nodes[index % 2], name: "c\(index)")
                    for _ in 0..<10 {
                        for room in order { _ = try client.call("conversation:join", ["cid": room]) }
                        for room in order { _ = try client.call("conversation:leave", ["cid": room]) }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }.start()
        }
        group.wait()
        #expect(failures.withLock { $0 }.isEmpty)
        let admin = try PostgresConnection(url: url)
        #expect(try admin.queryOne("SELECT COUNT(*) AS n FROM events")?.int("n") == 16 * 10 * 2 * 2)
    }

    @Test func twoNodesStartingAtOnceOnAnEmptyDatabaseMigrateOnce() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let started = Locked<[Result<ParlorApplication, any Error>]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            let result = Result { try Self.node(url) }
            started.withLock { $0.append(result) }
        }
        let nodes = try started.withLock { $0 }.map { try $0.get() }
        defer { nodes.forEach { $0.shutdown() } }
        for node in nodes { #expect(try http(node, "GET", "/healthz").status == 200) }
        let admin = try PostgresConnection(url: url)
        let migrations = try admin.query("SELECT id FROM schema_migrations ORDER BY id").compactMap { $0.string("id") }
        #expect(migrations == ["001_initial", "002_cluster_nodes", "003_media_home", "004_member_attachments", "005_webhook_outbox", "006_identity_hardening",
                              "007_recordings", "008_e2ee_rooms", "009_stream_public", "010_node_http_url", "011_media_link_offers", "012_media_room_listeners"])
        #expect(try admin.queryOne("SELECT COUNT(*) AS n FROM nodes")?.int("n") == 2, "each node holds a lease")
    }
}

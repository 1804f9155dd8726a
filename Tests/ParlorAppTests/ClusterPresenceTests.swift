#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorApp
import ParlorPostgres
import PostgresTestCluster
import Testing

/// Presence across nodes (issue 11): a user in one room through connections on two nodes stays present while any of
/// them is attached, and POST /auth sees a name in live use on any live node.
@Suite struct ClusterPresenceTests {
    /// The member's holder and since when it is away, as stored.
    private static func presence(_ admin: PostgresConnection, _ member: String) throws -> (node: String?, away: Int64?, joined: Bool) {
        let row = try admin.queryOne("SELECT node_id, disconnected_at, state FROM members WHERE id = $1", [.text(member)])
        return (row?.string("node_id"), row?.int("disconnected_at"), row?.string("state") == "JOINED")
    }

    /// The nodes with a connection of the member attached, as stored.
    private static func attachments(_ admin: PostgresConnection, _ member: String) throws -> [String] {
        try admin.query("SELECT node_id FROM member_attachments WHERE member_id = $1 ORDER BY node_id", [.text(member)])
            .compactMap { $0.string("node_id") }
    }

    /// Polls every 20 ms until `condition` holds or 10 s pass: for a node's handling of a closed connection, which
    /// sends nothing to anyone that a test could await.
    private static func eventually(_ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if try condition() { return true }
            usleep(20_000)
        }
        return try condition()
    }

    private static func nodeID(_ admin: PostgresConnection, ofSession session: String) throws -> String? {
        try admin.queryOne("SELECT node_id FROM sessions WHERE id = $1", [.text(session)])?.string("node_id")
    }

    /// Two nodes with a grace period of 2 s on a fresh database, an admin connection to it, and a room created
    /// through node A with a watcher joined there; both nodes stopped afterwards (a test may stop one before).
    /// A newcomer joins through `node`; `connection` (of the user under test) hears its member:joined.
    private static func hearsANewcomer(_ connection: TestWebSocket, joiningThrough node: ParlorApplication, room: String) throws {
        let newcomer = try TestWebSocket(node, name: "newcomer")
        let newcomerMember = try #require(try newcomer.join(room)["member_id"] as? String)
        _ = try connection.event("member:joined", in: room, member: newcomerMember)
    }

    /// The watcher hears `member` leave as dropped, and the room's history holds that member:left exactly once.
    private static func expectDroppedOnce(_ member: String, in room: String, watcher: TestWebSocket, admin: PostgresConnection) throws {
        let left = try watcher.event("member:left", in: room, member: member)
        #expect((left["body"] as? [String: Any])?["reason"] as? String == "dropped")
        let leaves = try admin.queryOne("SELECT COUNT(*) AS n FROM events WHERE room_id = $1 AND type = 'member:left' AND from_member = $2",
                                        [.text(room), .text(member)])?.int("n")
        #expect(leaves == 1, "dropped exactly once")
    }

    private static func withTwoNodes(lease: Double, _ body: (ParlorApplication, ParlorApplication, PostgresConnection, String, TestWebSocket) throws -> Void) throws {
        let url = try TestPostgres.shared().makeDatabase()
        let a = try ClusterTests.node(url, lease: lease, grace: 2)
        defer { a.shutdown() }
        let b = try ClusterTests.node(url, lease: lease, grace: 2)
        defer { b.shutdown() }
        let admin = try PostgresConnection(url: url)
        let room = try createRoom(a)
        let watcher = try TestWebSocket(a, name: "watcher")
        _ = try watcher.join(room)
        try body(a, b, admin, room, watcher)
    }

    @Test func aUserOnTwoNodesStaysPresentUntilItsLastConnectionClosesThenDropsOnce() throws {
        try Self.withTwoNodes(lease: 5) { a, b, admin, room, watcher in
            // U joins through B, then through A: A's join makes A the holder of the membership.
            let grant = try auth(port: a.port, name: "u")
            let onB = try TestWebSocket(port: b.port, token: grant.jwt, timeout: 15)
            let member = try #require(try onB.join(room)["member_id"] as? String)
            let onA = try TestWebSocket(port: a.port, token: grant.jwt)
            #expect(try onA.join(room)["member_id"] as? String == member, "the same member: a join is idempotent")
            let nodeA = try #require(try Self.nodeID(admin, ofSession: onA.sessionID))
            let nodeB = try #require(try Self.nodeID(admin, ofSession: onB.sessionID))
            #expect(try Self.presence(admin, member).node == nodeA)
            #expect(try Self.attachments(admin, member) == [nodeA, nodeB].sorted())

            // The holder's connection closes: the membership passes to B, where U is still attached, present.
            onA.drop()
            #expect(try Self.eventually { try Self.attachments(admin, member) == [nodeB] })
            let handed = try Self.presence(admin, member)
            #expect(handed.node == nodeB && handed.away == nil && handed.joined, "held by B and present: no grace period runs")
            // U still hears the room on B: a newcomer's join through A.
            try Self.hearsANewcomer(onB, joiningThrough: a, room: room)

            // B's connection closes too: now U is away, and drops once after the grace period.
            onB.drop()
            try Self.expectDroppedOnce(member, in: room, watcher: watcher, admin: admin)
            #expect(try Self.presence(admin, member).joined == false)
            #expect(try Self.attachments(admin, member).isEmpty)
            try watcher.sync()
            let transcript = watcher.log.compactMap { message -> String? in
                guard message["cid"] as? String == room, (message["body"] as? [String: Any])?["member_id"] as? String == member else { return nil }
                return message["type"] as? String
            }
            #expect(transcript == ["member:joined", "member:left"], "no second member:joined, one member:left")
        }
    }

    @Test func whenTheHoldingNodeStopsTheOtherNodeWithTheUsersConnectionTakesItOverPresent() throws {
        try Self.withTwoNodes(lease: 3) { a, b, admin, room, watcher in
            let grant = try auth(port: a.port, name: "u")
            let onA = try TestWebSocket(port: a.port, token: grant.jwt, timeout: 15)
            let member = try #require(try onA.join(room)["member_id"] as? String)
            let onB = try TestWebSocket(port: b.port, token: grant.jwt)
            _ = try onB.join(room)
            let nodeA = try #require(try Self.nodeID(admin, ofSession: onA.sessionID))
            #expect(try Self.presence(admin, member).node != nodeA, "B holds it: U joined there last")

            // B stops (its lease given up; its connections go without a disconnect being recorded): A's next heartbeat
            // takes B over, and hands U's membership to A, where U is attached, present rather than away.
            b.shutdown()
            #expect(try Self.eventually { try Self.presence(admin, member).node == nodeA })
            let taken = try Self.presence(admin, member)
            #expect(taken.away == nil && taken.joined, "present: its connection on A is attached")
            #expect(try Self.attachments(admin, member) == [nodeA], "B's attachment went with its takeover")
            // U hears the room on A, and nobody saw it leave.
            try Self.hearsANewcomer(onA, joiningThrough: a, room: room)

            // Its last connection closes: one drop after the grace period, by A.
            onA.drop()
            try Self.expectDroppedOnce(member, in: room, watcher: watcher, admin: admin)
        }
    }

    @Test func authSeesANameInLiveUseThroughASessionOnAnotherLiveNode() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let a = try ClusterTests.node(url)
        defer { a.shutdown() }
        let b = try ClusterTests.node(url)
        defer { b.shutdown() }
        // alice is connected on A, in no room.
        let alice = try auth(port: a.port, name: "alice")
        let connected = try TestWebSocket(port: a.port, token: alice.jwt)
        try connected.sync()

        // On B, without alice's claim: the name is in use on A, so a separate identity, and alice's token still works.
        let other = try auth(port: b.port, name: "alice")
        #expect(other.userID != alice.userID, "not handed alice's identity while she is connected on another node")
        #expect(try http(b, "GET", "/rooms", token: alice.jwt).status == 200)
        try connected.sync()

        // A stops (its lease given up): a session on a node that is gone does not count, so the name is free again.
        a.shutdown()
        let taken = try auth(port: b.port, name: "alice")
        #expect(taken.userID == alice.userID, "the name's own identity, handed over")
        #expect(try http(b, "GET", "/rooms", token: alice.jwt).status == 401,
                "the previous holder's tokens end with the hand-over")
    }

    /// A reaction is not stored, so no event carries it to the other nodes: it is relayed to them, and members joined
    /// through another node see it once (found by the stage browser test over two nodes).
    @Test func aReactionReachesMembersOnEveryNodeOnce() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let nodes = try (0..<2).map { _ in try ClusterTests.node(url) }
        defer { nodes.forEach { $0.shutdown() } }
        let room = try createRoom(nodes[0])
        let carol = try TestWebSocket(nodes[0], name: "carol")
        let alice = try TestWebSocket(nodes[1], name: "alice")
        let carolMember = try #require(try carol.join(room)["member_id"] as? String)
        _ = try alice.join(room)
        _ = try carol.call("reaction:send", ["cid": room, "emoji": "👏"])
        let seen = try alice.event("reaction", in: room, member: carolMember)
        #expect((seen["body"] as? [String: Any])?["emoji"] as? String == "👏")
        _ = try carol.event("reaction", in: room, member: carolMember)
        // Once: a message sent after it arrives with nothing like it before.
        _ = try carol.call("message:send", ["cid": room, "text": "after"])
        _ = try alice.event("message:text", in: room)
        #expect(!alice.inbox.contains { $0["type"] as? String == "reaction" }, "the reaction came twice")
    }
}

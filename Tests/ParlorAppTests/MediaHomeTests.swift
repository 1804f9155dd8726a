import Foundation
import ParlorApp
import ParlorLoop
import ParlorPostgres
import ParlorRooms
import PostgresTestCluster
import Testing

/// Several nodes with the forwarding unit (issue 11's media decision): one node at a time serves a room's audio,
/// its media home, so members whose WebSockets are on different nodes hear each other. Real parts: the test
/// process's PostgreSQL, servers on port 0 sharing a database, and in-process media clients over real UDP.
@Suite struct MediaHomeTests {
    private static func node(_ url: PostgresURL, relayTimeout: Double = 10) throws -> ParlorApplication {
        var configuration = AppConfiguration.testing()
        configuration.rooms.mediaRelayTimeout = .seconds(relayTimeout)
        configuration.databasePath = url.string
        configuration.jwtSecret = nil
        configuration.dataDirectory = NSTemporaryDirectory() + "/parlor-unused-\(UUID().uuidString)"
        configuration.rooms.nodeLease = .seconds(3)
        configuration.rooms.gracePeriod = .seconds(5)
        return try buildApplication(configuration)
    }

    private typealias Member = NodeMediaMember

    /// Two nodes on a fresh database, a room created through node 0, alice (a speaker) joined through node 0 and bob
    /// (a listener) through node 1; their peer connections are closed and the nodes stopped afterwards.
    private static func withTwoNodes(_ body: (PostgresURL, [ParlorApplication], EventLoop, String, Member, Member) throws -> Void) throws {
        let url = try TestPostgres.shared().makeDatabase()
        let nodes = try (0..<2).map { _ in try node(url) }
        defer { nodes.forEach { $0.shutdown() } }
        try withMediaClientLoop { loop in
            let room = try createRoom(nodes[0])
            let alice = try Member(nodes[0], "alice", in: room, speaker: true)
            let bob = try Member(nodes[1], "bob", in: room, speaker: false)
            defer { [alice, bob].forEach { $0.media?.close() } }
            try body(url, nodes, loop, room, alice, bob)
        }
    }

    /// The speaker's payloads reach the listener intact on one slot, `media:slots` names the speaker, and speaking is
    /// seen on both nodes; whichever of the two offered first (its node is the home), the other's offer is relayed.
    @Test(arguments: [true, false]) func membersOnTwoNodesHearEachOther(speakerOffersFirst: Bool) throws {
        try Self.withTwoNodes { url, nodes, loop, room, alice, bob in
            if speakerOffersFirst {
                try alice.offer(room, loop: loop, sends: true)
                try bob.offer(room, loop: loop, sends: false)
            } else {
                try bob.offer(room, loop: loop, sends: false)
                try alice.offer(room, loop: loop, sends: true)
            }
            // Both answers come from the home: the node of the first offer.
            let home = nodes[speakerOffersFirst ? 0 : 1]
            #expect(alice.answered(by: home) && bob.answered(by: home))
            let admin = try PostgresConnection(url: url)
            #expect(try admin.queryOne("SELECT media_node FROM rooms WHERE id = $1", [.text(room)])?.string("media_node")
                == (try admin.queryOne("SELECT id FROM nodes WHERE media_address LIKE $1",
                                       [.text("%:\(home.media?.localAddress.port ?? 0)")])?.string("id")))

            let slots = try SFUTests.slots(bob.socket, room, carrying: alice.id)
            #expect(slots.first?["mid"] as? String == "1")
            let sent = (1...3).map { SFUTests.payload("alice across nodes \($0)") }
            for payload in sent { try alice.media?.send(payload, level: 40) }
            let received = try #require(try bob.media?.waitForPacket { $0.payload == sent[2] })
            #expect(received.map(\.payload) == sent)
            #expect(Set(received.map(\.ssrc)).count == 1)
            #expect(alice.media?.received.isEmpty == true)

            // Speaking, decided at the home, reaches the members on both nodes.
            try alice.media?.startStreaming(SFUTests.payload("talking"), level: 20)
            for member in [alice, bob] { _ = try member.socket.event("audio:speaking:on", in: room, member: alice.id) }
            try alice.media?.stopStreaming()
            // Nothing is left waiting in the relay.
            #expect(try admin.queryOne("SELECT COUNT(*) AS n FROM media_relay")?.int("n") == 0)
        }
    }

    /// A mute asked on a node that is not the home reaches the home (as an event) and stops the speaker there.
    @Test func aSpeakerMutedOnAnotherNodeReachesNobody() throws {
        try Self.withTwoNodes { _, nodes, loop, room, alice, bob in
            try bob.offer(room, loop: loop, sends: false)  // node 1 is the home
            try alice.offer(room, loop: loop, sends: true)
            #expect(alice.answered(by: nodes[1]))
            _ = try SFUTests.slots(bob.socket, room, carrying: alice.id)

            _ = try alice.socket.call("audio:mute:on", ["cid": room])
            _ = try SFUTests.slots(bob.socket, room, carrying: nil)  // the home stopped forwarding alice
            for index in 1...5 { try alice.media?.send(SFUTests.payload("muted \(index)"), level: 20) }
            _ = try alice.socket.call("audio:mute:off", ["cid": room])
            _ = try SFUTests.slots(bob.socket, room, carrying: alice.id)
            let marker = SFUTests.payload("unmuted")
            try alice.media?.send(marker, level: 20)
            let received = try #require(try bob.media?.waitForPacket { $0.payload == marker })
            #expect(received.map(\.payload) == [marker], "a packet sent while muted was forwarded")
        }
    }

    /// The home stops (giving up its lease): the survivor taking it over clears the room's home, the clients on the
    /// other nodes are told to offer again, their new offers make a survivor the home, and audio flows again.
    @Test func whenTheHomeStopsClientsOfferAgainAndASurvivorServesTheRoom() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let nodes = try (0..<3).map { _ in try Self.node(url) }
        defer { nodes.forEach { $0.shutdown() } }
        try withMediaClientLoop { loop in
            let room = try createRoom(nodes[1])
            let carol = try Member(nodes[0], "carol", in: room, speaker: false)
            let alice = try Member(nodes[1], "alice", in: room, speaker: true)
            let bob = try Member(nodes[2], "bob", in: room, speaker: false)
            defer { [carol, alice, bob].forEach { $0.media?.close() } }
            try carol.offer(room, loop: loop, sends: false)  // node 0 is the home; alice's and bob's offers are relayed
            try alice.offer(room, loop: loop, sends: true)
            try bob.offer(room, loop: loop, sends: false)
            #expect(alice.answered(by: nodes[0]) && bob.answered(by: nodes[0]))
            _ = try SFUTests.slots(bob.socket, room, carrying: alice.id)
            let before = SFUTests.payload("before the home stopped")
            try alice.media?.send(before, level: 40)
            try bob.media?.waitForPacket { $0.payload == before }

            nodes[0].shutdown()
            for member in [alice, bob] { _ = try member.socket.next { $0["type"] as? String == "media:restart" && $0["cid"] as? String == room } }
            try alice.offer(room, loop: loop, sends: true)
            try bob.offer(room, loop: loop, sends: false)
            #expect(alice.answered(by: nodes[1]) && bob.answered(by: nodes[1]), "the first offer after the restart chose its node")
            _ = try SFUTests.slots(bob.socket, room, carrying: alice.id)
            let after = SFUTests.payload("after the home stopped")
            try alice.media?.send(after, level: 40)
            let received = try #require(try bob.media?.waitForPacket { $0.payload == after })
            #expect(received.last?.payload == after)
        }
    }

    /// media:close and a leave on a node that is not the home end the speaker's session there: the listener's slot
    /// empties and the home has one session left.
    @Test func aCloseOrALeaveOnAnotherNodeEndsTheSessionAtTheHome() throws {
        try Self.withTwoNodes { _, nodes, loop, room, alice, bob in
            try bob.offer(room, loop: loop, sends: false)  // node 1 is the home
            try alice.offer(room, loop: loop, sends: true)
            _ = try SFUTests.slots(bob.socket, room, carrying: alice.id)
            #expect(nodes[1].media?.onLoop { $0.sessionCount } == 2)
            #expect(nodes[0].media?.onLoop { $0.sessionCount } == 0, "the speaker's node forwards nothing itself")

            _ = try alice.socket.call("media:close", ["cid": room])
            _ = try SFUTests.slots(bob.socket, room, carrying: nil)
            #expect(nodes[1].media?.onLoop { $0.sessionCount } == 1)

            try alice.offer(room, loop: loop, sends: true)
            _ = try SFUTests.slots(bob.socket, room, carrying: alice.id)
            _ = try alice.socket.call("conversation:leave", ["cid": room])
            _ = try SFUTests.slots(bob.socket, room, carrying: nil)
            #expect(nodes[1].media?.onLoop { $0.sessionCount } == 1)
        }
    }

    /// A home that holds a lease but never answers (here a node row with no process behind it): the relayed offer
    /// is refused with server:error:unavailable when the timer runs out, not left waiting.
    @Test func aRelayedOfferTheHomeNeverAnswersIsRefused() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let node = try Self.node(url, relayTimeout: 0.5)
        defer { node.shutdown() }
        try withMediaClientLoop { loop in
            let room = try createRoom(node)
            let admin = try PostgresConnection(url: url)
            _ = try admin.run("INSERT INTO nodes (id, started_at, lease_until) VALUES ('NODE-silent', 0, 9000000000000000)")
            _ = try admin.run("UPDATE rooms SET media_node = 'NODE-silent' WHERE id = $1", [.text(room)])
            let alice = try Member(node, "alice", in: room, speaker: true)
            let media = try MediaTestClient(loop: loop, slots: 3, sends: true)
            defer { media.close() }
            let reply = try alice.socket.request("media:offer", ["cid": room, "sdp": media.offer])
            #expect(reply["type"] as? String == "error")
            #expect((reply["body"] as? [String: Any])?["code"] as? String == "server:error:unavailable")
            #expect(try admin.queryOne("SELECT COUNT(*) AS n FROM media_relay WHERE node_id = 'NODE-silent'")?.int("n") == 1)
            #expect(node.media?.onLoop { $0.sessionCount } == 0)
        }
    }

    /// A listener whose WebSocket moves from another node to the home offers again from the same peer connection:
    /// the home hands it the session it had through the other node (same slots, DTLS goes on), and audio goes on.
    @Test func aListenerWhoseWebSocketMovesToTheHomeKeepsItsSession() throws {
        try Self.withTwoNodes { _, nodes, loop, room, alice, bob in
            try alice.offer(room, loop: loop, sends: true)  // node 0 is the home
            try bob.offer(room, loop: loop, sends: false)
            _ = try SFUTests.slots(bob.socket, room, carrying: alice.id)
            let first = SFUTests.payload("through node 1")
            try alice.media?.send(first, level: 40)
            try bob.media?.waitForPacket { $0.payload == first }

            // The same user (a token of node 1 is valid on node 0) on a new connection; the old one closes.
            bob.socket = try TestWebSocket(port: nodes[0].port, token: try token(nodes[1], "bob"))
            _ = try bob.socket.join(room)
            let media = try #require(bob.media)
            let reply = try bob.socket.call("media:offer", ["cid": room, "sdp": media.offer])
            let slots = reply["slots"] as? [[String: Any]] ?? []
            #expect(slots.contains { $0["member_id"] as? String == alice.id }, "the renegotiation keeps the slots")
            #expect(nodes[0].media?.onLoop { $0.sessionCount } == 2)
            let second = SFUTests.payload("now on the home")
            try alice.media?.send(second, level: 40)
            let received = try media.waitForPacket { $0.payload == second }
            #expect(received.map(\.payload) == [first, second])
        }
    }

    /// The NOTIFY payloads read back as sent; a relay for another node and malformed payloads are not ours.
    @Test func mediaHomeNotificationsReadBackAsSent() throws {
        let signals: [MediaHomeSignal] = [.relayed(node: "NODE-a"), .speaking(home: "NODE-b", roomID: "RM-1", memberID: "MEM-2", on: true),
                                          .speaking(home: "NODE-b", roomID: "RM-1", memberID: "MEM-2", on: false),
                                          .restart(home: "NODE-b", roomID: "RM-1")]
        for signal in signals {
            let payload = try #require(signal.payload)
            #expect(MediaHomeSignal(payload: payload, nodeID: "NODE-a") == signal)
        }
        #expect(MediaHomeSignal(payload: "media relay NODE-a", nodeID: "NODE-other") == nil)
        #expect(MediaHomeSignal.timedOut(request: 1).payload == nil)
        for malformed in ["media", "media speaking NODE-b RM-1", "media restart", "RM-1 4", "media nonsense NODE-a"] {
            #expect(MediaHomeSignal(payload: malformed, nodeID: "NODE-a") == nil, "\(malformed)")
        }
    }
}

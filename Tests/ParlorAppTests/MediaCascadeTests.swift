import Foundation
@testable import ParlorApp
import ParlorMedia
import ParlorLoop
import ParlorPostgres
import PostgresTestCluster
import Testing

/// One room's audio across nodes (issue 41): with `--cluster-media-address`, each node serves its own connections'
/// media, and each speaker's packets cross a media link once to every other node with listeners in the room. Real
/// parts: the test process's PostgreSQL, servers on port 0 sharing a database, in-process media clients over UDP.
@Suite struct MediaCascadeTests {
    static func node(_ url: PostgresURL, _ configure: (inout AppConfiguration) -> Void = { _ in }) throws -> ParlorApplication {
        var configuration = AppConfiguration.testing()
        configuration.databasePath = url.string
        configuration.jwtSecret = nil
        configuration.dataDirectory = NSTemporaryDirectory() + "/parlor-unused-\(UUID().uuidString)"
        configuration.rooms.nodeLease = .seconds(3)
        configuration.rooms.gracePeriod = .seconds(5)
        configuration.clusterMediaAddress = try AppConfiguration.parse(arguments: ["--cluster-media-address", "127.0.0.1:0"],
                                                                       environment: [:]).clusterMediaAddress
        configuration.clusterListenersPoll = .milliseconds(100)
        configure(&configuration)
        let app = try buildApplication(configuration)
        #expect(app.mediaLink != nil)
        return app
    }

    typealias Member = NodeMediaMember

    /// Three nodes on a fresh database and a room created through the first; the nodes are stopped afterwards.
    static func withThreeNodes(_ body: ([ParlorApplication], EventLoop, String) throws -> Void) throws {
        let url = try TestPostgres.shared().makeDatabase()
        let nodes = try (0..<3).map { _ in try node(url) }
        defer { nodes.forEach { $0.shutdown() } }
        try withMediaClientLoop { loop in try body(nodes, loop, try createRoom(nodes[0])) }
    }

    static func linkCounter(_ app: ParlorApplication, _ name: String) -> Int {
        let line = app.metrics.exposition(requests: [:]).split(separator: "\n").first { $0.hasPrefix("\(name) ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? -1
    }

    /// A speaker on node A, listeners on A, B (two) and C: every listener hears the speaker's payloads intact, each from
    /// its own node, and A sends each packet once to B and once to C, not once per remote listener.
    @Test func aSpeakerCrossesOnceToEachNodeWithListeners() throws {
        try Self.withThreeNodes { nodes, loop, room in
            let alice = try Member(nodes[0], "alice", in: room, speaker: true)
            let listeners = try [(0, "lena"), (1, "bert"), (1, "bess"), (2, "cleo")].map { index, name in
                (index, try Member(nodes[index], name, in: room, speaker: false))
            }
            defer { ([alice] + listeners.map(\.1)).forEach { $0.media?.close() } }
            for (index, listener) in listeners {
                try listener.offer(room, loop: loop, sends: false)
                #expect(listener.answered(by: nodes[index]), "\(listener.name)'s media is not on the node of its connection")
            }
            try alice.offer(room, loop: loop, sends: true)
            #expect(alice.answered(by: nodes[0]))

            // Until every node has heard of the others' listeners, alice streams; each listener's slot then carries her.
            try alice.media?.startStreaming(SFUTests.payload("warming up"), level: 20)
            for (_, listener) in listeners { _ = try SFUTests.slots(listener.socket, room, carrying: alice.id) }
            try alice.media?.stopStreaming()
            let linkB = try #require(nodes[1].mediaLink)
            let captured = Locked<[[UInt8]]>([])
            nodes[0].mediaLink?.sentTap.withLock { tap in
                tap = { datagram, destination in if destination == linkB.localAddress { captured.withLock { $0.append(datagram) } } }
            }
            let fence = SFUTests.payload("fence")
            try alice.media?.send(fence, level: 20)
            for (_, listener) in listeners { try listener.media?.waitForPacket { $0.payload == fence } }

            let sentBefore = Self.linkCounter(nodes[0], "parlor_media_link_packets_sent_total")
            let receivedBefore = nodes.map { Self.linkCounter($0, "parlor_media_link_packets_received_total") }
            let sent = (1...20).map { SFUTests.payload("alice \($0)") }
            for payload in sent { try alice.media?.send(payload, level: 40) }
            for (_, listener) in listeners {
                try listener.media?.waitForPacket { $0.payload == sent.last }
                #expect(listener.payloads(from: "alice ") == sent, "\(listener.name) did not hear alice's payloads intact and in order")
                #expect(Set(listener.media?.received.map(\.ssrc) ?? []).count == 1)
            }
            #expect(Self.linkCounter(nodes[0], "parlor_media_link_packets_sent_total") - sentBefore == 2 * sent.count)
            #expect(Self.linkCounter(nodes[1], "parlor_media_link_packets_received_total") - receivedBefore[1] == sent.count)
            #expect(Self.linkCounter(nodes[2], "parlor_media_link_packets_received_total") - receivedBefore[2] == sent.count)
            #expect(Self.linkCounter(nodes[0], "parlor_media_link_packets_received_total") == receivedBefore[0])
            // Each node decrypted nothing of alice but on A; B's one linked copy reached both of its listeners.
            let linked = nodes.map { $0.media?.workerStatistics.reduce(0) { $0 + $1.linkedReceived } ?? -1 }
            #expect(linked[0] == 0 && linked[1] > 0 && linked[2] > 0)
            #expect(alice.media?.received.isEmpty == true)
            // Speaking (400 ms of her audio above the threshold) is decided on alice's node and heard on every node.
            for (_, listener) in listeners { _ = try listener.socket.event("audio:speaking:on", in: room, member: alice.id) }

            // A replayed and a forged datagram on the link to B are dropped and counted; B's listeners hear nothing twice.
            let original = try #require(captured.withLock { $0.last })
            let raw = try RawUDPSender()
            try raw.send(original, to: linkB.localAddress)
            var forged = original
            forged[5 + 7] &+= 100  // a sequence number not sent yet
            forged[forged.count - 1] ^= 0x01
            try raw.send(forged, to: linkB.localAddress)
            let marker = SFUTests.payload("alice after the replay")
            try alice.media?.send(marker, level: 40)
            for (index, listener) in listeners where index == 1 {
                try listener.media?.waitForPacket { $0.payload == marker }
                #expect(listener.payloads(from: "alice ") == sent + [marker], "\(listener.name) heard a replayed or forged packet")
            }
            #expect(linkB.counters.droppedCount("replayed") == 1 && linkB.counters.droppedCount("forged") == 1)
        }
    }

    /// Speakers on A and B, listeners on C: each listener gets both on separate slots; a mute asked on A silences
    /// alice on C within a second, while bob goes on.
    @Test func speakersOnTwoNodesReachAThirdAndAMuteSilencesEverywhere() throws {
        try Self.withThreeNodes { nodes, loop, room in
            let alice = try Member(nodes[0], "alice", in: room, speaker: true)
            let bob = try Member(nodes[1], "bob", in: room, speaker: true)
            let listeners = try ["cleo", "carl"].map { try Member(nodes[2], $0, in: room, speaker: false) }
            defer { ([alice, bob] + listeners).forEach { $0.media?.close() } }
            for listener in listeners { try listener.offer(room, loop: loop, sends: false) }
            try alice.offer(room, loop: loop, sends: true)
            try bob.offer(room, loop: loop, sends: true)

            try alice.media?.startStreaming(SFUTests.payload("alice streaming"), level: 20)
            try bob.media?.startStreaming(SFUTests.payload("bob streaming"), level: 20)
            for listener in listeners {
                let slots = try SFUTests.slots(listener.socket, room, carrying: alice.id)
                let both = slots.contains { $0["member_id"] as? String == bob.id }
                    ? slots : try SFUTests.slots(listener.socket, room, carrying: bob.id)
                let mids = [alice.id, bob.id].compactMap { member in both.first { $0["member_id"] as? String == member }?["mid"] as? String }
                #expect(mids.count == 2 && Set(mids).count == 2, "\(listener.name): alice and bob are not on separate slots")
            }
            for listener in listeners {
                try listener.media?.waitForPacket { $0.payload == SFUTests.payload("alice streaming") }
                try listener.media?.waitForPacket { $0.payload == SFUTests.payload("bob streaming") }
                let received = listener.media?.received ?? []
                let ssrcs = [SFUTests.payload("alice streaming"), SFUTests.payload("bob streaming")].map { payload in
                    Set(received.filter { $0.payload == payload }.map(\.ssrc))
                }
                #expect(ssrcs[0].count == 1 && ssrcs[1].count == 1 && ssrcs[0] != ssrcs[1])
            }

            let muted = Date()
            _ = try alice.socket.call("audio:mute:on", ["cid": room])
            for listener in listeners {
                let slots = try SFUTests.slots(listener.socket, room) { slots in !slots.contains { $0["member_id"] as? String == alice.id } }
                #expect(slots.contains { $0["member_id"] as? String == bob.id })
            }
            #expect(Date().timeIntervalSince(muted) < 1, "alice still had a slot on node C a second after her mute")
            let aliceCounts = listeners.map { $0.payloads(from: "alice").count }
            let marker = SFUTests.payload("bob after the mute")
            try bob.media?.send(marker, level: 20)
            for listener in listeners { try listener.media?.waitForPacket { $0.payload == marker } }
            for (listener, before) in zip(listeners, aliceCounts) {
                #expect(listener.payloads(from: "alice").count <= before + 1, "\(listener.name) still heard alice after her mute")
            }
            try alice.media?.stopStreaming()
            try bob.media?.stopStreaming()
        }
    }
}

extension MediaCascadeTests {
    /// Links exist on demand: a node that never shares a room's audio with another keys no link to it, and a link no
    /// room needs any more is torn down once idle (here after 1 s, checked at each 1 s renewal).
    @Test func linksAreKeyedOnDemandAndTornDownWhenIdle() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let nodes = try (0..<3).map { _ in
            try Self.node(url) { configuration in
                configuration.clusterLinkRenewal = .seconds(1)
                configuration.clusterLinkIdleTeardown = .seconds(1)
            }
        }
        defer { nodes.forEach { $0.shutdown() } }
        try withMediaClientLoop { loop in
            let room = try createRoom(nodes[0])
            let alice = try Member(nodes[0], "alice", in: room, speaker: true)
            let bert = try Member(nodes[1], "bert", in: room, speaker: false)
            _ = try Member(nodes[2], "cleo", in: room, speaker: false)  // joined, but no media session: C never listens
            defer { [alice, bert].forEach { $0.media?.close() } }
            try bert.offer(room, loop: loop, sends: false)
            try alice.offer(room, loop: loop, sends: true)
            let stream = SFUTests.payload("alice streaming")
            try alice.media?.startStreaming(stream, level: 20)
            try bert.media?.waitForPacket { $0.payload == stream }
            #expect(Self.linkCounter(nodes[0], "parlor_media_links") == 1 && Self.linkCounter(nodes[1], "parlor_media_links") == 1)
            #expect(nodes[0].mediaLink?.linkedEpoch(of: nodes[1].mediaLink?.nodeID ?? "") != nil)
            #expect(Self.linkCounter(nodes[2], "parlor_media_links") == 0, "node C keyed links it never needed")

            // bert closes his media: B no longer listens, A stops sending, and both ends tear the link down.
            _ = try bert.socket.call("media:close", ["cid": room])
            try eventually {
                Self.linkCounter(nodes[0], "parlor_media_links") == 0 && Self.linkCounter(nodes[1], "parlor_media_links") == 0
            }
            #expect(Self.linkCounter(nodes[0], "parlor_media_links_torn_down_total") == 1)
            #expect(Self.linkCounter(nodes[1], "parlor_media_links_torn_down_total") == 1)
            try alice.media?.stopStreaming()
        }
    }
}

extension SFUTests {
    /// The next `media:slots` for `room` whose slots satisfy `predicate`.
    static func slots(_ socket: TestWebSocket, _ room: String, where predicate: @escaping ([[String: Any]]) -> Bool) throws -> [[String: Any]] {
        let event = try socket.next { message in
            guard message["type"] as? String == "media:slots", message["cid"] as? String == room else { return false }
            return predicate((message["body"] as? [String: Any])?["slots"] as? [[String: Any]] ?? [])
        }
        return (event["body"] as? [String: Any])?["slots"] as? [[String: Any]] ?? []
    }
}

import Foundation
import ParlorApp
import ParlorPostgres
import PostgresTestCluster
import Testing

/// Issue 41 and rooms worth keeping: a node that records a room or streams it live listens in it, so every speaker
/// reaches it over the links, wherever their sessions are.
extension MediaCascadeTests {
    static func recordingNode(_ url: PostgresURL, directory: String) throws -> ParlorApplication {
        let app = try ClusterTests.node(url) { configuration in
            configuration.recordingEngine = .mediaRecorder
            configuration.adminToken = recordingAdminToken
            configuration.recordingsDirectory = directory
            configuration.clusterMediaAddress = try? AppConfiguration.parse(arguments: ["--cluster-media-address", "127.0.0.1:0"],
                                                                            environment: [:]).clusterMediaAddress
            configuration.clusterListenersPoll = .milliseconds(100)
        }
        #expect(app.mediaLink != nil)
        return app
    }

    /// Waits (10 s at most) until `node` took at least `count` packets from its links.
    static func waitForLinkedPackets(_ node: ParlorApplication, atLeast count: Int) {
        let deadline = Date().addingTimeInterval(10)
        while linkCounter(node, "parlor_media_link_packets_received_total") < count, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
    }

    /// The recording runs on the node chosen when it starts (the room's media home); a speaker whose session is on
    /// another node reaches it over the link and has a track of his own.
    @Test func aRecordingHoldsASpeakerOnAnotherNode() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let directories = (0..<2).map { _ in NSTemporaryDirectory() + "/parlor-recordings-\(UUID().uuidString)" }
        let nodes = try directories.map { try Self.recordingNode(url, directory: $0) }
        defer { nodes.forEach { $0.shutdown() } }
        try withMediaClientLoop { loop in
            let aliceToken = try token(nodes[0], "alice")  // the room's creator: she may record it
            let created = try http(nodes[0], "POST", "/rooms", json: #"{"display_name":"Panel"}"#, token: aliceToken)
            let room = try #require(created.object["id"] as? String)
            let alice = try Member(TestWebSocket(port: nodes[0].port, token: aliceToken), "alice", in: room, speaker: false)
            let bob = try Member(nodes[1], "bob", in: room, speaker: true)
            defer { bob.media?.close() }
            let recordingID = try #require(try alice.socket.call("room:record:start", ["cid": room])["recording_id"] as? String)
            try bob.offer(room, loop: loop, sends: true)
            #expect(bob.answered(by: nodes[1]))
            try bob.media?.startStreaming(SFUTests.payload("bob on the record"), level: 20)
            // Node 0 has no session in the room: the only way bob's packets reach it is the link.
            Self.waitForLinkedPackets(nodes[0], atLeast: 25)
            #expect(Self.linkCounter(nodes[0], "parlor_media_link_packets_received_total") >= 25)
            try bob.media?.stopStreaming()
            _ = try alice.socket.call("room:record:stop", ["cid": room])
            var manifest = try http(nodes[0], "GET", "/recordings/\(recordingID)/manifest.json", headers: RecordingAudioTests.admin)
            let deadline = Date().addingTimeInterval(10)
            while manifest.object["state"] as? String != "complete", Date() < deadline {
                Thread.sleep(forTimeInterval: 0.05)
                manifest = try http(nodes[0], "GET", "/recordings/\(recordingID)/manifest.json", headers: RecordingAudioTests.admin)
            }
            let tracks = manifest.object["tracks"] as? [[String: Any]] ?? []
            #expect(tracks.map { $0["member"] as? String } == [bob.id], "the recording has no track of bob: \(manifest.text)")
            #expect(directories[1].isEmpty || ((try? FileManager.default.contentsOfDirectory(atPath: directories[1])) ?? []).isEmpty,
                    "node 1 recorded too")
        }
    }

    /// The live stream is mixed on whichever node a listener asks (no media home): that node listens in the room, and
    /// the speaker on the other node reaches its mix over the link.
    @Test func anyNodeStreamsTheRoomLiveWithSpeakersFromTheOthers() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let nodes = try (0..<2).map { _ in try Self.recordingNode(url, directory: NSTemporaryDirectory() + "/parlor-unused-\(UUID().uuidString)") }
        defer { nodes.forEach { $0.shutdown() } }
        try withMediaClientLoop { loop in
            let aliceToken = try token(nodes[0], "alice")
            let created = try http(nodes[0], "POST", "/rooms", json: #"{"display_name":"Panel"}"#, token: aliceToken)
            let room = try #require(created.object["id"] as? String)
            let alice = try Member(TestWebSocket(port: nodes[0].port, token: aliceToken), "alice", in: room, speaker: true)
            defer { alice.media?.close() }
            try alice.offer(room, loop: loop, sends: true)
            try alice.media?.startStreaming(SFUTests.payload("alice live"), level: 20)

            // Node 1 has no session in the room, and was never its media home: it mixes the stream all the same.
            let listener = try LiveReader(port: nodes[1].port, path: "/rooms/\(room)/live.ogg?token=\(aliceToken)")
            defer { listener.close() }
            #expect(listener.status == 200, "\(listener.head)")
            _ = try listener.readChunks(count: 1)
            #expect(nodes[1].metrics.liveMixes.load() == 1 && nodes[0].metrics.liveMixes.load() == 0)
            Self.waitForLinkedPackets(nodes[1], atLeast: 25)
            #expect(Self.linkCounter(nodes[1], "parlor_media_link_packets_received_total") >= 25, "alice's packets never reached node 1's mix")
            try alice.media?.stopStreaming()
        }
    }
}

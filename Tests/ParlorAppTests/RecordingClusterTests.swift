import Foundation
import ParlorApp
import PostgresTestCluster
import Testing

/// Recordings with two nodes on one PostgreSQL (issue 38, item 5): the recording runs on the room's media home and
/// its row names that node; a start elsewhere is refused naming the home; the other node's members see the mark,
/// may stop it there (the home's engine stops), and a download asked of the other node is proxied from the node with
/// the files (RecordingProxyTests has the rest).
@Suite struct RecordingClusterTests {
    @Test func theRecordingRunsOnTheRoomsMediaHomeAndEveryNodeSeesIt() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let directories = (0..<2).map { _ in NSTemporaryDirectory() + "/parlor-recordings-\(UUID().uuidString)" }
        let nodes = try directories.map { directory in
            try ClusterTests.node(url) { configuration in
                configuration.recordingEngine = .mediaRecorder
                configuration.adminToken = recordingAdminToken
                configuration.recordingsDirectory = directory
            }
        }
        /// The manifest a node's engine keeps on its disk for the recording (nil: that node does not record it).
        func manifestOnDisk(_ node: Int, _ recordingID: String) -> [String: Any]? {
            FileManager.default.contents(atPath: directories[node] + "/" + recordingID + "/manifest.json")
                .flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        }
        defer { nodes.forEach { $0.shutdown() } }
        let aliceToken = try token(nodes[0], "alice")
        let created = try http(nodes[0], "POST", "/rooms", json: #"{"display_name":"Panel","properties":{"mode":"stage"}}"#, token: aliceToken)
        let room = try #require(created.object["id"] as? String)
        let alice = try TestWebSocket(port: nodes[0].port, token: aliceToken)
        let aliceOnB = try TestWebSocket(port: nodes[1].port, token: aliceToken)
        _ = try alice.join(room)
        _ = try aliceOnB.join(room)
        let bob = try TestWebSocket(nodes[1], name: "bob")
        _ = try bob.join(room)

        // Node 0 records: the room had no media home, so node 0 becomes it.
        let recordingID = try #require(try alice.call("room:record:start", ["cid": room])["recording_id"] as? String)
        #expect((try bob.event("room:recording", in: room)["body"] as? [String: Any])?["recording_id"] as? String == recordingID,
                "a member on the other node hears of it")
        #expect(manifestOnDisk(0, recordingID)?["state"] as? String == "recording", "node 0's engine records it")
        let listed = try #require(try http(nodes[1], "GET", "/rooms/\(room)/recordings", token: aliceToken).array.first)
        let home = try #require(listed["node"] as? String)
        #expect(home.hasPrefix("NODE-"))
        #expect(manifestOnDisk(0, recordingID)?["node"] as? String == home, "the engine is told which node records, for its manifest")
        let carol = try TestWebSocket(nodes[1], name: "carol")
        #expect((try carol.join(room)["recording"] as? [String: Any])?["recording_id"] as? String == recordingID,
                "the other node's join reply says so")

        // Stopped on node 1: node 0's engine stops it once node 0 has caught the room up.
        _ = try aliceOnB.call("room:record:stop", ["cid": room])
        _ = try alice.event("room:recording", in: room)
        let deadline = Date().addingTimeInterval(10)
        while manifestOnDisk(0, recordingID)?["state"] as? String != "complete", Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(manifestOnDisk(0, recordingID)?["state"] as? String == "complete", "node 0's engine finished it")

        // A start on node 1, which is not the room's media home: refused, naming the home.
        let refused = try aliceOnB.request("room:record:start", ["cid": room])
        #expect(errorCode(refused) == "room:error:recording-unavailable")
        #expect(((refused["body"] as? [String: Any])?["detail"] as? String)?.contains(home) == true)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: directories[1])) ?? []).isEmpty, "node 1's engine never started")

        // Its files are on node 0: node 1 fetches them from there.
        let elsewhere = try http(nodes[1], "GET", "/recordings/\(recordingID)/manifest.json", token: aliceToken)
        #expect(elsewhere.status == 200)
        #expect(elsewhere.object["recording_id"] as? String == recordingID)
        let deadlineReady = Date().addingTimeInterval(10)
        var manifest = try http(nodes[0], "GET", "/recordings/\(recordingID)/manifest.json", token: aliceToken)
        while manifest.object["state"] as? String != "complete", Date() < deadlineReady {
            Thread.sleep(forTimeInterval: 0.02)
            manifest = try http(nodes[0], "GET", "/recordings/\(recordingID)/manifest.json", token: aliceToken)
        }
        #expect(manifest.status == 200)
        #expect(manifest.object["state"] as? String == "complete")
    }

    /// The node recording a room stops (it gives up its lease): the other nodes end the recording as interrupted, so
    /// the room stops showing the mark.
    @Test func aRecordingWhoseNodeStopsEndsInterruptedOnTheOthers() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let configure: (inout AppConfiguration) -> Void = { configuration in
            configuration.recordingEngine = .mediaRecorder
            configuration.adminToken = recordingAdminToken
            configuration.recordingsDirectory = NSTemporaryDirectory() + "/parlor-recordings-\(UUID().uuidString)"
        }
        let home = try ClusterTests.node(url, lease: 2, configure)
        let other = try ClusterTests.node(url, lease: 2, configure)
        defer { other.shutdown() }
        let aliceToken = try token(home, "alice")
        let created = try http(home, "POST", "/rooms", json: #"{"display_name":"Panel","properties":{"mode":"stage"}}"#, token: aliceToken)
        let room = try #require(created.object["id"] as? String)
        let alice = try TestWebSocket(port: home.port, token: aliceToken)
        _ = try alice.join(room)
        let bob = try TestWebSocket(other, name: "bob")
        _ = try bob.join(room)
        let recordingID = try #require(try alice.call("room:record:start", ["cid": room])["recording_id"] as? String)
        _ = try bob.event("room:recording", in: room)
        home.shutdown()
        let stopped = try bob.event("room:recording", in: room)["body"] as? [String: Any]
        #expect(stopped?["recording_id"] as? String == recordingID)
        #expect(stopped?["on"] as? Bool == false)
        #expect(stopped?["reason"] as? String == "interrupted")
        let listed = try #require(try http(other, "GET", "/rooms/\(room)/recordings", token: aliceToken).array.first)
        #expect(listed["state"] as? String == "interrupted")
    }
}

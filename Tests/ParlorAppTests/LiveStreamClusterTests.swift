import Foundation
import ParlorApp
import PostgresTestCluster
import Testing

/// The live stream with two nodes on one PostgreSQL (issue 38): only the room's media home mixes it; the other node
/// answers 404 naming the home.
@Suite struct LiveStreamClusterTests {
    @Test func onlyTheRoomsMediaHomeStreamsItAndTheOtherNodeNamesIt() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let nodes = try (0..<2).map { _ in try ClusterTests.node(url) }
        defer { nodes.forEach { $0.shutdown() } }
        let aliceToken = try token(nodes[0], "alice")
        let created = try http(nodes[0], "POST", "/rooms", json: #"{"display_name":"Panel"}"#, token: aliceToken)
        let room = try #require(created.object["id"] as? String)
        let alice = try TestWebSocket(port: nodes[0].port, token: aliceToken)
        _ = try alice.join(room)

        // Node 0 is asked first: the room had no media home, so node 0 becomes it and streams.
        let listener = try LiveReader(port: nodes[0].port, path: "/rooms/\(room)/live.ogg?token=\(aliceToken)")
        #expect(listener.status == 200)
        _ = try listener.readChunks(count: 1)
        #expect(nodes[0].metrics.liveMixes.load() == 1)

        let elsewhere = try http(nodes[1], "GET", "/rooms/\(room)/live.ogg", token: aliceToken)
        #expect(elsewhere.status == 404 && elsewhere.errorCode == "room:error:not-found", "\(elsewhere.status) \(elsewhere.text)")
        #expect((elsewhere.object["detail"] as? String)?.contains("NODE-") == true, "\(elsewhere.text)")
        #expect(nodes[1].metrics.liveMixes.load() == 0, "the other node mixes nothing")
        listener.close()

        // Made public through node 1: the home, node 0, applies the stored room:stream and lets anyone listen; made
        // private there again, node 0 cuts off the listener without a token.
        let aliceOnB = try TestWebSocket(port: nodes[1].port, token: aliceToken)
        _ = try aliceOnB.join(room)
        _ = try aliceOnB.call("room:stream:public", ["cid": room, "public": true])
        // (Node 0's own room:stream count updates come first: the listener above came and went.)
        let event = try alice.next { message in
            message["type"] as? String == "room:stream" && (message["body"] as? [String: Any])?["public"] as? Bool == true
        }
        #expect(event["id"] is Int, "the public switch is a stored event: \(event)")
        let anonymous = try LiveReader(port: nodes[0].port, path: "/rooms/\(room)/live.ogg")
        #expect(anonymous.status == 200, "\(anonymous.head)")
        _ = try anonymous.readChunks(count: 1)
        _ = try aliceOnB.call("room:stream:public", ["cid": room, "public": false])
        #expect(try anonymous.readToLastChunk())
        anonymous.close()
        _ = try aliceOnB.call("room:stream:public", ["cid": room, "public": true])

        // Stored with the room: a node started now reads it (its join reply says so).
        let late = try ClusterTests.node(url)
        defer { late.shutdown() }
        let carol = try TestWebSocket(late, name: "carol")
        #expect((try carol.join(room)["stream"] as? [String: Any])?["public"] as? Bool == true)
    }
}

import Foundation
@testable import ParlorApp
import ParlorPostgres
import PostgresTestCluster
import Testing

/// Recording downloads through any node (issue 38, item 4): two nodes on one PostgreSQL, the files on node 0's disk,
/// downloaded byte for byte through node 1, which proxies them signed under the nodes' shared secret; node 0 refuses
/// a forged or stale signature; a node that is gone or does not answer is named.
@Suite struct RecordingProxyTests {
    /// Two nodes with recordings directories of their own, a recording made on node 0 (the room's media home) and
    /// finished, and a large file beside its tracks.
    private func twoNodesWithARecording(size: Int) throws -> (nodes: [ParlorApplication], recordingID: String, token: String,
                                                                  bytes: [UInt8], home: String) {
        let url = try TestPostgres.shared().makeDatabase()
        let nodes = try (0..<2).map { _ in
            try ClusterTests.node(url) { configuration in
                configuration.recordingEngine = .mediaRecorder
                configuration.recordingsDirectory = NSTemporaryDirectory() + "/parlor-recordings-\(UUID().uuidString)"
            }
        }
        let (recordingID, token, bytes) = try RecordingDownloadTests.recordingWithLargeFile(nodes[0], size: size)
        let listed = try http(nodes[1], "GET", "/recordings/\(recordingID)/track-9.opus", headers: [:])
        #expect(listed.status == 401, "node 1 still asks the client who it is")
        let row = try #require(try ClusterTests.recordingNode(nodes[0], recordingID))
        return (nodes, recordingID, token, bytes, row)
    }

    @Test func aRecordingMadeOnOneNodeDownloadsThroughTheOther() throws {
        let size = 3 * 1024 * 1024 + 7
        let (nodes, recordingID, aliceToken, bytes, _) = try twoNodesWithARecording(size: size)
        defer { nodes.forEach { $0.shutdown() } }
        let path = "/recordings/\(recordingID)/track-9.opus"
        let through = try http(nodes[1], "GET", path, token: aliceToken)
        #expect(through.status == 200)
        #expect(through.header("Content-Length") == String(size))
        #expect(through.header("Content-Type") == "audio/ogg")
        #expect(through.header("Content-Disposition")?.contains(recordingID) == true)
        let throughIdentical = through.body == bytes  // a Bool: a failed == on megabytes would be diffed for minutes
        #expect(throughIdentical, "byte for byte through node 1")
        let range = try http(nodes[1], "GET", path, headers: ["Authorization": "Bearer \(aliceToken)", "Range": "bytes=1000-1999"])
        #expect(range.status == 206)
        #expect(range.header("Content-Range") == "bytes 1000-1999/\(size)")
        let rangeIdentical = range.body == Array(bytes[1000..<2000])  // a Bool: a failed == on megabytes would be diffed for minutes
        #expect(rangeIdentical)
        let (head, _) = try rawRequest(nodes[1], "HEAD \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(aliceToken)\r\n\r\n",
                                       headOnly: true)
        #expect(head.status == 200, "HEAD asked of node 0 as HEAD")
        #expect(head.header("Content-Length") == String(size))
        let (missingHead, _) = try rawRequest(nodes[1], "HEAD /recordings/\(recordingID)/track-7.opus HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                              + "Authorization: Bearer \(aliceToken)\r\n\r\n", headOnly: true)
        #expect(missingHead.status == 404)
        let missing = try http(nodes[1], "GET", "/recordings/\(recordingID)/track-7.opus", token: aliceToken)
        #expect(missing.status == 404, "node 0's answer passed on")
        #expect(missing.errorCode == "recording:error:not-found")
        // Who may download is still decided by node 1: a stranger is refused before anything is proxied.
        let stranger = try token(nodes[1], "mallory")
        #expect(try http(nodes[1], "GET", path, token: stranger).status == 403)
    }

    @Test func theHoldingNodeRefusesAForgedOrStaleSignature() throws {
        let (nodes, recordingID, _, bytes, _) = try twoNodesWithARecording(size: 200_000)
        defer { nodes.forEach { $0.shutdown() } }
        let secret = try #require(try nodes[0].storage.sharedSecret(named: "node-proxy"))
        let auth = NodeProxyAuth(secret: secret)
        let path = "/recordings/\(recordingID)/track-9.opus"
        let now = NodeProxyAuth.nowSeconds
        func get(_ value: String, _ path: String = path) throws -> TestResponse {
            try http(nodes[0], "GET", path, headers: [NodeProxyAuth.header: value])
        }
        let forged = NodeProxyAuth(secret: Array("not the cluster's secret".utf8)).sign(method: "GET", path: path, at: now)
        for value in [forged, "\(now).00", "nonsense", auth.sign(method: "GET", path: path, at: now - 120),
                      auth.sign(method: "GET", path: path, at: now + 120),
                      auth.sign(method: "GET", path: "/recordings/\(recordingID)/manifest.json", at: now)] {
            let refused = try get(value)
            #expect(refused.status == 403, "\(value)")
            #expect(refused.errorCode == "recording:error:node-auth-invalid")
        }
        let signed = try get(auth.sign(method: "GET", path: path, at: now - 30))
        #expect(signed.status == 200, "a signature 30 s old is within the window")
        let signedIdentical = signed.body == bytes  // a Bool: a failed == on megabytes would be diffed for minutes
        #expect(signedIdentical)
    }

    /// Every node writes where it is reached; a row a survivor deleted (taking the node over) and the node's heartbeat
    /// inserted again has it too.
    @Test func eachNodesRowSaysWhereItIsReachedAfterATakeoverToo() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let node = try ClusterTests.node(url, lease: 1.5)
        defer { node.shutdown() }
        guard case .postgres(let database) = node.storage else { throw TestFailure("PostgreSQL expected") }
        func row() throws -> String? {
            try database.read { try $0.queryOne("SELECT http_url FROM nodes", [])?.string("http_url") }
        }
        #expect(try row() == "http://127.0.0.1:\(node.port)")
        _ = try database.writeOnPool { try $0.run("DELETE FROM nodes", []) }
        let deadline = Date().addingTimeInterval(10)
        var again = try row()
        while again == nil, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)  // the next heartbeat, every half second here
            again = try row()
        }
        #expect(again == "http://127.0.0.1:\(node.port)")
    }

    @Test func aNodeThatIsGoneOrDoesNotAnswerIsNamed() throws {
        let (nodes, recordingID, token, _, home) = try twoNodesWithARecording(size: 1000)
        defer { nodes[1].shutdown() }
        let path = "/recordings/\(recordingID)/track-9.opus"
        // Alive but not answering where it said: 502.
        guard case .postgres(let database) = nodes[0].storage else { throw TestFailure("PostgreSQL expected") }
        let closed = try TestPostgres.freePort()
        _ = try database.writeOnPool { try $0.run("UPDATE nodes SET http_url = $2 WHERE id = $1", [.text(home), .text("http://127.0.0.1:\(closed)")]) }
        let unreachable = try http(nodes[1], "GET", path, token: token)
        #expect(unreachable.status == 502)
        #expect(unreachable.errorCode == "recording:error:node-unreachable")
        #expect((unreachable.object["detail"] as? String)?.contains(home) == true)

        nodes[0].shutdown()
        let started = Date()
        let gone = try http(nodes[1], "GET", path, token: token)
        #expect(gone.status == 404)
        #expect((gone.object["detail"] as? String)?.contains(home) == true, "names the node that holds the files")
        #expect(Date().timeIntervalSince(started) < 2, "promptly")
    }
}

@Test func theNodeURLOptionTakesAnHTTPAddressAndTheDefaultIsTheListeningOne() throws {
    #expect(try AppConfiguration.parse(arguments: ["--node-url", "http://10.0.0.5:8080"], environment: [:]).nodeURL == "http://10.0.0.5:8080")
    #expect(try AppConfiguration.parse(arguments: [], environment: ["PARLOR_NODE_URL": "http://[fd00::5]:80/"]).nodeURL == "http://[fd00::5]:80")
    for bad in ["https://10.0.0.5", "10.0.0.5:8080", "http://10.0.0.5/parlor", ""] {
        #expect(throws: ConfigurationError.self, "\(bad)") { try AppConfiguration.parse(arguments: ["--node-url", bad], environment: [:]) }
    }
    #expect(ParlorApplication.dialURL(host: "0.0.0.0", port: 8080, tls: false) == "http://127.0.0.1:8080")
    #expect(ParlorApplication.dialURL(host: "::", port: 8080, tls: false) == "http://[::1]:8080")
    #expect(ParlorApplication.dialURL(host: "10.0.0.5", port: 80, tls: false) == "http://10.0.0.5:80")
}

extension ClusterTests {
    /// The node a recording's row names (as GET /rooms/{id}/recordings lists it).
    static func recordingNode(_ app: ParlorApplication, _ recordingID: String) throws -> String? {
        guard case .postgres(let database) = app.storage else { return nil }
        return try database.read { try $0.queryOne("SELECT node FROM recordings WHERE id = $1", [.text(recordingID)])?.string("node") }
    }
}

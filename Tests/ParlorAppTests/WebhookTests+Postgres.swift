#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorApp
import ParlorPostgres
import PostgresTestCluster
import Testing

/// Issue 34, item 18 on PostgreSQL: the outbox rows are written in the rooms transaction there too, and a node that
/// dies (kill -9) with webhooks undelivered leaves them to a live node, which delivers them with their ids.
@Suite struct WebhookPostgresTests {
    @Test func aLiveNodeDeliversTheWebhooksOfANodeKilledBeforeDeliveringThem() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let receiver = try WebhookReceiver(failFirst: .max)
        defer { receiver.stop() }
        let hooks = "http://127.0.0.1:\(receiver.port)/hooks"
        let lease = 2.0
        let survivor = try ClusterTests.node(url, lease: lease) {
            $0.webhookURLs = [hooks]
            $0.webhookInitialBackoff = .milliseconds(20)
        }
        defer { survivor.shutdown() }
        let directory = NSTemporaryDirectory() + "parlor-webhooks-pg-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let doomed = try ExecutableTests.Child(["serve", "--host", "127.0.0.1", "--port", "0", "--database", url.string,
                                                "--node-lease", "\(lease)", "--webhook-urls", hooks], in: directory)
        defer { if doomed.process.isRunning { kill(doomed.process.processIdentifier, SIGKILL) } }
        let port = try ExecutableTests.port(fromListeningLine: try doomed.readLine())
        let token = try auth(port: port, name: "alice").jwt
        var rooms: [String] = []
        for _ in 0..<3 { rooms.append(try WebhookOutboxTests.createRoom(port, token: token)) }
        // The dying node tried (the receiver refused): its rows are in the outbox, its own.
        let firstAttempt = try #require(try receiver.waitForAttempts(count: 1).first)
        kill(doomed.process.processIdentifier, SIGKILL)
        #expect(doomed.waitForExit(timeout: 10) != nil)
        receiver.acceptAll()
        // After the dead node's lease, the survivor takes its rows over and delivers them.
        let delivered = try receiver.waitFor(count: 3, timeout: 20)
        let started = delivered.filter { $0.event == "room_started" }
        #expect(Set(started.compactMap { ($0.json["room"] as? [String: Any])?["id"] as? String }) == Set(rooms))
        #expect(started.contains { $0.id != nil && $0.id == firstAttempt.id }, "the retried webhook keeps its id")
        // Taken over (+3) and deleted once delivered (-3): the survivor's outbox is empty again.
        let deadline = Date().addingTimeInterval(10)
        while survivor.metrics.webhookQueueDepth.load() != 0, Date() < deadline { usleep(20_000) }
        #expect(survivor.metrics.webhookQueueDepth.load() == 0)
    }

    /// Item 5 on PostgreSQL: behind a receiver that never answers, the node's outbox stays at --webhook-queue-max
    /// rows, the oldest dropped in the rooms transaction and counted.
    @Test func theOutboxStaysAtItsCapBehindAStalledReceiver() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let receiver = try WebhookReceiver(failFirst: 0, stalls: true)
        defer { receiver.stop() }
        let cap = 50
        let node = try ClusterTests.node(url) {
            $0.webhookURLs = ["http://127.0.0.1:\(receiver.port)/hooks"]
            $0.webhookQueueMax = cap
        }
        defer { node.shutdown() }
        let room = try createRoom(node)
        let churn = try TestWebSocket(node, name: "churn")
        let pairs = 100
        for pair in 0..<pairs {
            try churn.sendText(#"{"type":"conversation:join","tid":"j\#(pair)","body":{"cid":"\#(room)"}}"#)
            try churn.sendText(#"{"type":"conversation:leave","tid":"l\#(pair)","body":{"cid":"\#(room)"}}"#)
        }
        try churn.sync()
        #expect(node.metrics.webhookQueueDepth.load() == cap)
        #expect(node.metrics.webhookDropped.load() == 1 + 2 * pairs - cap)
        let connection = try PostgresConnection(url: url)
        let stored = try connection.queryOne("SELECT COUNT(*) AS n FROM webhook_outbox")?.int("n")
        #expect(stored == Int64(cap), "rows in the database")
    }
}

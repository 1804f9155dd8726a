#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ParlorApp

/// Issue 34, items 5 and 18, against the built binary: webhooks wait in the database's outbox, survive a restart or a
/// crash, and stay within --webhook-queue-max whatever a receiver does.
@Suite struct WebhookOutboxTests {
    static let admin = "admin-token-for-the-webhook-outbox-tests"

    /// A fresh directory for a database file that outlives one server process.
    static func makeDirectory() throws -> String {
        let directory = NSTemporaryDirectory() + "parlor-outbox-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    static func serverArguments(directory: String, receiverPort: Int, scheme: String = "http") -> [String] {
        ["--data-dir", directory, "--database", directory + "/parlor.db", "--admin-token", admin,
         "--webhook-urls", "\(scheme)://127.0.0.1:\(receiverPort)/hooks", "--webhook-secret", "webhook-secret-for-tests"]
    }

    static func metrics(_ port: Int) throws -> PrometheusText {
        let response = try RawConnection.oneRequest(port, "GET", "/metrics", headers: ["Authorization": "Bearer \(admin)"])
        guard response.status == 200 else { throw TestFailure("GET /metrics: \(response.status)") }
        return try PrometheusText(String(decoding: response.body, as: UTF8.self))
    }

    static func createRoom(_ port: Int, token: String) throws -> String {
        let response = try RawConnection.oneRequest(port, "POST", "/rooms", json: #"{"display_name":"outbox"}"#,
                                                    headers: ["Authorization": "Bearer \(token)"])
        guard response.status == 201, let id = response.object["id"] as? String else { throw TestFailure("POST /rooms: \(response.status) \(response.text)") }
        return id
    }

    /// Item 18: the queue was in memory, dropped at shutdown and lost in a crash. Rooms created (committed, 201)
    /// while the receiver refuses everything are delivered by the next process, with the ids of the first attempts.
    @Test(arguments: [SIGKILL, SIGTERM])
    func webhooksCommittedBeforeTheServerStopsAreDeliveredAfterItsRestart(signal: Int32) throws {
        let receiver = try WebhookReceiver(failFirst: .max)
        defer { receiver.stop() }
        let directory = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let arguments = Self.serverArguments(directory: directory, receiverPort: receiver.port)
        var rooms: [String] = []
        let firstAttempt: WebhookReceiver.Request
        do {
            let server = try ServerProcess(arguments)
            let token = try TransportAttackTests.authToken(port: server.port, name: "alice")
            for _ in 0..<5 { rooms.append(try Self.createRoom(server.port, token: token)) }
            firstAttempt = try #require(try receiver.waitForAttempts(count: 1).first)
            kill(server.pid, signal)
            #expect(server.child.waitForExit(timeout: 10) != nil)
        }
        receiver.acceptAll()
        let restarted = try ServerProcess(arguments)
        let delivered = try receiver.waitFor(count: 5)
        let started = delivered.filter { $0.event == "room_started" }
        #expect(Set(started.compactMap { ($0.json["room"] as? [String: Any])?["id"] as? String }) == Set(rooms))
        #expect(started.contains { $0.id == firstAttempt.id && firstAttempt.id != nil }, "the retried webhook keeps its id")
        // Delivered rows leave the outbox.
        #expect(restarted.eventually { (try? Self.metrics(restarted.port).value("parlor_webhook_queue_depth")) == 0 })
    }

    /// Item 5: a receiver that never answers while anonymous clients make thousands of events grew the queue
    /// without limit (35,444 events: +35 MiB, never released). Now the outbox holds at most --webhook-queue-max rows,
    /// the oldest dropped and counted, and the server's memory stays bounded.
    @Test func aStalledReceiverKeepsTheOutboxAtItsCapAndMemoryBounded() throws {
        let receiver = try WebhookReceiver(failFirst: 0, stalls: true)
        defer { receiver.stop() }
        let directory = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cap = 500
        let server = try ServerProcess(Self.serverArguments(directory: directory, receiverPort: receiver.port)
                                       + ["--webhook-queue-max", String(cap), "--message-rate", "0", "--frame-rate", "0"])
        let token = try TransportAttackTests.authToken(port: server.port, name: "flooder")
        let room = try Self.createRoom(server.port, token: token)
        _ = try receiver.waitForAttempts(count: 1)
        let baseline = try server.residentBytes()
        let churn = try TestWebSocket(port: server.port, token: token)
        let pairs = 10_000
        for round in 0..<(pairs / 100) {
            for pair in 0..<100 {
                try churn.sendText(#"{"type":"conversation:join","tid":"j\#(round)-\#(pair)","body":{"cid":"\#(room)"}}"#)
                try churn.sendText(#"{"type":"conversation:leave","tid":"l\#(round)-\#(pair)","body":{"cid":"\#(room)"}}"#)
            }
            try churn.sync()
        }
        let metrics = try Self.metrics(server.port)
        // room_started and one member_joined and member_left per pair, nothing delivered: all but the cap dropped.
        #expect(try metrics.value("parlor_webhook_queue_depth") == Double(cap))
        #expect(try metrics.value("parlor_webhook_dropped_total", ["reason": "queue_full"]) == Double(1 + 2 * pairs - cap))
        #expect(try metrics.value("parlor_webhook_oldest_age_seconds") > 0)
        // Measured here: +5.4 to 5.7 MiB with the outbox (the history and SQLite's cache), +17.4 MiB with the
        // queue in memory before it.
        let grown = try server.residentBytes() - baseline
        #expect(!ServerProcess.checksMemory || grown < 12 * ServerProcess.mebibyte, "RSS grew \(grown / 1024) KiB")
        print("webhook flood: \(2 * pairs) events, RSS +\(grown / 1024) KiB")
    }
}

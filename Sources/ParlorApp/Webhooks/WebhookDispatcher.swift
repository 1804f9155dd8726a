import Foundation
import ParlorLoop
import ParlorMetrics
import ParlorRooms

/// Delivers the outbox's webhooks to the configured URLs. Each URL has its own thread, so a slow receiver delays
/// only itself and never an event loop. A thread reads a page of its URL's rows (oldest first), POSTs them strictly
/// in order (so in order per room), retrying a failed one with exponential backoff before the next, and deletes
/// them once answered 2xx: at least once, across restarts (a crash after a POST and before its delete sends it
/// again; the body's `id` tells the receiver). It never holds more than a page in memory.
final class WebhookDispatcher: Sendable {
    private let queues: [WebhookQueue]

    /// `pollInterval`: how often an idle thread looks again without being woken (PostgreSQL: for the rows of a
    /// node that died); nil: only when woken.
    init(outbox: WebhookOutbox, secret: [UInt8], tls: WebhookTLS, retryFor: Double, initialBackoff: TimeSpan,
         pollInterval: Double?, logger: Logger, metrics: ServerMetrics) throws {
        let heads = WebhookQueueHeads(count: outbox.urls.count, metrics: metrics)
        queues = try outbox.urls.enumerated().map { index, url in
            guard let target = WebhookHTTPClient.Target(url) else { throw WebhookOutboxError() }
            return WebhookQueue(url: url, target: target, outbox: outbox, secret: secret, tls: tls, retryFor: retryFor,
                                initialBackoff: initialBackoff, pollInterval: pollInterval,
                                head: { heads.set(index, $0) }, logger: logger, metrics: metrics)
        }
        outbox.onCommit { [queues] in for queue in queues { queue.wake() } }
        for queue in queues { queue.start() }
    }

    /// Stops the delivery threads, cutting a POST in progress; what is not delivered stays in the outbox.
    func stop() {
        for queue in queues { queue.stop() }
    }
}

/// The oldest undelivered webhook's time per URL, for parlor_webhook_oldest_age_seconds (the oldest of them).
final class WebhookQueueHeads: Sendable {
    private let heads: Locked<[Int64]>
    private let metrics: ServerMetrics

    init(count: Int, metrics: ServerMetrics) {
        heads = Locked([Int64](repeating: 0, count: count))
        self.metrics = metrics
    }

    /// `createdAt`: the URL's oldest row's time (Unix ms), 0 when it has none.
    func set(_ index: Int, _ createdAt: Int64) {
        let oldest = heads.withLock { heads in
            heads[index] = createdAt
            return heads.filter { $0 > 0 }.min() ?? 0
        }
        metrics.webhookOldestCreatedAt.set(Int(oldest))
    }
}

/// One receiver's delivery thread.
final class WebhookQueue: Sendable {
    let url: String
    private let target: WebhookHTTPClient.Target
    private let outbox: WebhookOutbox
    private let secret: [UInt8]
    private let tls: WebhookTLS
    private let retryFor: Double
    private let initialBackoff: TimeSpan
    private let pollInterval: Double?
    private let head: @Sendable (Int64) -> Void
    private let logger: Logger
    private let metrics: ServerMetrics
    /// Commits since the start (a wake that comes while a page is read is not lost), and whether to stop.
    private let state = Locked<(wakes: Int, stopped: Bool)>((0, false))
    private let condition = NSCondition()
    private let finished = DispatchSemaphore(value: 0)
    /// The connection of the POST in progress (-1: none), shut down by `stop` so a stalled receiver does not hold
    /// the shutdown for the request's timeout.
    private let connection = Locked<Int32>(-1)
    static let pageSize = 32

    init(url: String, target: WebhookHTTPClient.Target, outbox: WebhookOutbox, secret: [UInt8], tls: WebhookTLS, retryFor: Double,
         initialBackoff: TimeSpan, pollInterval: Double?, head: @escaping @Sendable (Int64) -> Void, logger: Logger,
         metrics: ServerMetrics) {
        self.url = url
        self.target = target
        self.outbox = outbox
        self.secret = secret
        self.tls = tls
        self.retryFor = retryFor
        self.initialBackoff = initialBackoff
        self.pollInterval = pollInterval
        self.head = head
        self.logger = logger
        self.metrics = metrics
    }

    func start() {
        Thread.named("parlor-webhooks") { [self] in self.run() }.start()
    }

    func wake() {
        condition.lock()
        state.withLock { $0.wakes += 1 }
        condition.broadcast()
        condition.unlock()
    }

    func stop() {
        condition.lock()
        state.withLock { $0.stopped = true }
        condition.broadcast()
        condition.unlock()
        connection.withLock { fd in if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)) } }
        finished.wait()
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func run() {
        defer { finished.signal() }
        var nextAdoption = Date.distantPast
        while !isStopped {
            let wakes = state.withLock { $0.wakes }
            let rows: [WebhookOutboxRow]
            do {
                // Once per poll interval, not per page: it scans other nodes' rows.
                if let pollInterval, Date() >= nextAdoption {
                    nextAdoption = Date().addingTimeInterval(pollInterval)
                    let adopted = try outbox.store.adoptOrphanedWebhooks()
                    if adopted > 0 {
                        // Those for receivers this node does not have would never leave.
                        let unwanted = try outbox.store.deleteWebhooks(notTargeting: outbox.urls)
                        outbox.adjust(by: adopted - unwanted)
                        logger.info("webhooks of a stopped node taken over", ["url": url, "count": String(adopted - unwanted)])
                    }
                }
                rows = try outbox.store.pendingWebhooks(target: url, limit: Self.pageSize)
            } catch {
                logger.warning("webhook outbox unreadable", ["url": url, "error": "\(error)"])
                if !wait(seconds: 1, unlessWokenSince: nil) { return }
                continue
            }
            head(rows.first?.entry.createdAt ?? 0)
            if rows.isEmpty {
                if !wait(seconds: pollInterval, unlessWokenSince: wakes) { return }
                continue
            }
            var done: [Int64] = []
            for row in rows {
                guard deliver(row) else { break }
                done.append(row.sequence)
            }
            do {
                outbox.adjust(by: -(try outbox.store.deleteWebhooks(sequences: done)))
            } catch {
                // They stay and go again: at least once.
                logger.warning("delivered webhooks not deleted", ["url": url, "error": "\(error)"])
            }
        }
    }

    /// Delivers one webhook, retrying with backoff (doubling, at most 5 minutes apart) for as long as the webhook is
    /// younger than `retryFor`: a receiver down for an hour gets its webhooks late, not never. True once it is done
    /// with (delivered, or given up: logged and counted); false when shutdown interrupted it (it stays in the outbox).
    private func deliver(_ row: WebhookOutboxRow) -> Bool {
        let entry = row.entry
        let headers = [("X-Parlor-Event", entry.event), ("X-Parlor-Signature", WebhookPayload.signature(of: entry.body, secret: secret))]
        var delay = initialBackoff.seconds
        var attempt = 0
        while true {
            if isStopped { return false }
            attempt += 1
            do {
                let status = try WebhookHTTPClient.post(target, tls: tls, body: entry.body, headers: headers, timeout: 10, socket: connection)
                if (200..<300).contains(status) { return true }
                metrics.webhookFailures.add()
                logger.warning("webhook refused", ["url": url, "event": entry.event, "status": String(status), "attempt": String(attempt)])
            } catch {
                if isStopped { return false }  // the POST was cut by the shutdown: not a failure, it stays
                metrics.webhookFailures.add()
                logger.warning("webhook failed", ["url": url, "event": entry.event, "error": "\(error)", "attempt": String(attempt)])
            }
            let age = Date().timeIntervalSince1970 - Double(entry.createdAt) / 1000
            if age + delay > retryFor { break }
            if !wait(seconds: delay, unlessWokenSince: nil) { return false }
            delay = min(delay * 2, Self.maxBackoff)
        }
        metrics.webhookGaveUp.add()
        logger.error("webhook dropped: its receiver failed it for --webhook-retry-for", ["url": url, "event": entry.event, "attempts": String(attempt)])
        return true
    }

    /// The longest wait between two attempts at one webhook.
    static let maxBackoff = 300.0

    /// Waits `seconds` (nil: until woken), or until a commit newer than `wakes` (nil: commits do not end the
    /// wait); false when shutdown ended it.
    private func wait(seconds: Double?, unlessWokenSince wakes: Int?) -> Bool {
        let deadline = seconds.map { Date().addingTimeInterval($0) }
        condition.lock()
        defer { condition.unlock() }
        while true {
            let now = state.withLock { $0 }
            if now.stopped { return false }
            if let wakes, now.wakes != wakes { return true }
            if let deadline {
                if !condition.wait(until: deadline) { return !isStopped }
            } else {
                condition.wait()
            }
        }
    }
}

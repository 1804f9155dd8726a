import Foundation
import ParlorHTTP
import ParlorLoop
import ParlorMetrics
import ParlorRooms
import ParlorStore

/// Delivers room notices to the configured URLs. Each URL has its own thread and queue, so a slow receiver delays
/// only itself and never an event loop; within a URL deliveries go strictly in order (so in order per room),
/// and a failed one is retried with exponential backoff before the next is sent.
final class WebhookDispatcher: Sendable {
    private let queues: [WebhookQueue]

    init?(urls: [String], secret: [UInt8], maxAttempts: Int, initialBackoff: TimeSpan, logger: Logger,
          metrics: ServerMetrics = ServerMetrics()) {
        let targets = urls.compactMap { url in WebhookHTTPClient.Target(url).map { (url, $0) } }
        guard !targets.isEmpty else { return nil }
        queues = targets.map { WebhookQueue(url: $0.0, target: $0.1, secret: secret, maxAttempts: maxAttempts,
                                            initialBackoff: initialBackoff, logger: logger, metrics: metrics) }
    }

    /// Called on the rooms thread after a commit: encodes once, queues for every URL, returns at once.
    func enqueue(_ notices: [RoomNotice]) {
        let now = Timestamp.nowMilliseconds()
        let payloads = notices.map { WebhookPayload($0, deliveryID: Identifier.make("WH"), at: now) }
        for queue in queues { queue.append(payloads) }
    }

    /// Stops the delivery threads after the delivery in progress; what is still queued is dropped (and logged).
    func stop() {
        for queue in queues { queue.stop() }
    }
}

/// One receiver's ordered queue and its delivery thread.
final class WebhookQueue: Sendable {
    let url: String
    private let target: WebhookHTTPClient.Target
    private let secret: [UInt8]
    private let maxAttempts: Int
    private let initialBackoff: TimeSpan
    private let logger: Logger
    private let metrics: ServerMetrics
    private let state = Locked<(pending: [WebhookPayload], stopped: Bool)>(([], false))
    private let wake = NSCondition()
    private let finished = DispatchSemaphore(value: 0)

    init(url: String, target: WebhookHTTPClient.Target, secret: [UInt8], maxAttempts: Int, initialBackoff: TimeSpan, logger: Logger,
         metrics: ServerMetrics) {
        self.metrics = metrics
        self.url = url
        self.target = target
        self.secret = secret
        self.maxAttempts = maxAttempts
        self.initialBackoff = initialBackoff
        self.logger = logger
        Thread.named("parlor-webhooks") { [self] in self.run() }.start()
    }

    func append(_ payloads: [WebhookPayload]) {
        state.withLock { $0.pending += payloads }
        signal()
    }

    func stop() {
        let dropped = state.withLock { state in
            state.stopped = true
            return state.pending.count
        }
        signal()
        finished.wait()
        if dropped > 0 { logger.warning("webhooks not delivered at shutdown", ["url": url, "count": String(dropped)]) }
    }

    private func signal() {
        wake.lock()
        wake.broadcast()
        wake.unlock()
    }

    private func run() {
        while let payload = nextPayload() {
            deliver(payload)
        }
        finished.signal()
    }

    private func nextPayload() -> WebhookPayload? {
        wake.lock()
        defer { wake.unlock() }
        while true {
            let next: WebhookPayload?? = state.withLock { state in
                if state.stopped { return .some(nil) }
                return state.pending.isEmpty ? nil : .some(state.pending.removeFirst())
            }
            if let next { return next }
            wake.wait()
        }
    }

    /// Delivers one payload, retrying with backoff; gives up after maxAttempts (or at shutdown) and logs it.
    private func deliver(_ payload: WebhookPayload) {
        let headers = [("X-Parlor-Event", payload.event), ("X-Parlor-Signature", WebhookPayload.signature(of: payload.body, secret: secret))]
        var delay = initialBackoff.seconds
        for attempt in 1...maxAttempts {
            do {
                let status = try WebhookHTTPClient.post(target, body: payload.body, headers: headers, timeout: 10)
                if (200..<300).contains(status) { return }
                metrics.webhookFailures.add()
                logger.warning("webhook refused", ["url": url, "event": payload.event, "status": String(status), "attempt": String(attempt)])
            } catch {
                metrics.webhookFailures.add()
                logger.warning("webhook failed", ["url": url, "event": payload.event, "error": "\(error)", "attempt": String(attempt)])
            }
            if attempt == maxAttempts || !waitBeforeRetry(seconds: delay) { break }
            delay = min(delay * 2, 60)
        }
        logger.error("webhook dropped", ["url": url, "event": payload.event, "room": payload.roomID])
    }

    /// Waits out the backoff; false when shutdown interrupted it.
    private func waitBeforeRetry(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        wake.lock()
        defer { wake.unlock() }
        while !state.withLock({ $0.stopped }) {
            if !wake.wait(until: deadline) { return true }
        }
        return false
    }
}

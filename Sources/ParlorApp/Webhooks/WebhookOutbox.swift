import ParlorLoop
import ParlorMetrics
import ParlorRooms
import Synchronization

/// The webhook outbox as the rooms thread writes it: each batch's notices become rows (one per receiver URL) in the
/// batch's own transaction, and past `--webhook-queue-max` rows the oldest are dropped in that same transaction and
/// counted (parlor_webhook_dropped_total). The row count is kept here, exact on one node, so the bound costs no
/// COUNT(*) per batch: inserts add to it once committed, and every delete subtracts the rows it removed.
final class WebhookOutbox: RoomNoticeRecorder {
    let urls: [String]
    let store: any WebhookOutboxStore
    private let maxRows: Int
    private let metrics: ServerMetrics
    private let rows: Atomic<Int>
    /// The batch in progress (rooms thread only; a lock because the recorder is shared with the delivery threads).
    private let uncommitted = Locked<(inserted: Int, dropped: Int)>((0, 0))
    /// Wakes the delivery threads after a commit.
    private let wake = Locked<(@Sendable () -> Void)?>(nil)

    init(urls: [String], store: any WebhookOutboxStore, maxRows: Int, metrics: ServerMetrics, initialRows: Int) {
        self.urls = urls
        self.store = store
        self.maxRows = maxRows
        self.metrics = metrics
        rows = Atomic(initialRows)
        metrics.webhookQueueDepth.set(initialRows)
    }

    func onCommit(_ body: @escaping @Sendable () -> Void) {
        wake.withLock { $0 = body }
    }

    func record(_ notices: [RoomNotice], in transaction: any RoomTransaction) throws {
        guard let outbox = transaction as? any WebhookOutboxTransaction else { throw WebhookOutboxError() }
        let now = Timestamp.nowMilliseconds()
        var entries: [WebhookOutboxEntry] = []
        entries.reserveCapacity(notices.count * urls.count)
        for notice in notices {
            let payload = WebhookPayload(notice, deliveryID: Identifier.make("WH"), at: now)
            for url in urls { entries.append(WebhookOutboxEntry(target: url, event: payload.event, body: payload.body, createdAt: now)) }
        }
        try outbox.appendWebhooks(entries)
        let excess = rows.load(ordering: .relaxed) + entries.count - maxRows
        let dropped = excess > 0 ? try outbox.dropOldestWebhooks(excess) : 0
        uncommitted.withLock { $0 = (entries.count, dropped) }
    }

    func committed() {
        let (inserted, dropped) = uncommitted.withLock { batch in
            defer { batch = (0, 0) }
            return batch
        }
        if dropped > 0 { metrics.webhookDropped.add(dropped) }
        adjust(by: inserted - dropped)
        wake.withLock { $0 }?()
    }

    /// Rows deleted or adopted outside the rooms transaction (delivered, given up, taken over from a dead node).
    func adjust(by change: Int) {
        let now = rows.add(change, ordering: .relaxed).newValue
        metrics.webhookQueueDepth.set(max(0, now))
    }
}

struct WebhookOutboxError: Error, CustomStringConvertible {
    var description: String { "this store has no webhook outbox" }
}

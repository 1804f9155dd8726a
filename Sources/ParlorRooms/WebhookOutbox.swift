/// Webhooks wait in the database, not in memory: their rows are written in the rooms transaction that commits the
/// events they announce (`RoomNoticeRecorder`), so a crash cannot separate the two, and the delivery threads read
/// them a page at a time (`WebhookOutboxStore`) and delete them once a receiver took them.

/// One webhook for one receiver, its JSON already encoded (the payload's `id` is the receiver's idempotency key).
public struct WebhookOutboxEntry: Sendable {
    public let target: String
    public let event: String
    public let body: [UInt8]
    /// Unix ms.
    public let createdAt: Int64

    public init(target: String, event: String, body: [UInt8], createdAt: Int64) {
        self.target = target
        self.event = event
        self.body = body
        self.createdAt = createdAt
    }
}

/// A stored webhook: `sequence` orders a receiver's webhooks (commit order).
public struct WebhookOutboxRow: Sendable {
    public let sequence: Int64
    public let entry: WebhookOutboxEntry
}

/// What the rooms transaction writes to the outbox (SQLite and PostgreSQL transactions conform).
public protocol WebhookOutboxTransaction {
    func appendWebhooks(_ entries: [WebhookOutboxEntry]) throws
    /// Deletes the `count` oldest rows (of this node, with PostgreSQL); returns how many there were.
    func dropOldestWebhooks(_ count: Int) throws -> Int
}

/// The delivery threads' side of the outbox, outside the rooms transaction.
public protocol WebhookOutboxStore: Sendable {
    /// Up to `limit` of this node's rows for `target`, oldest first (a reader connection).
    func pendingWebhooks(target: String, limit: Int) throws -> [WebhookOutboxRow]
    /// Deletes delivered (or given up) rows; returns how many were still there.
    func deleteWebhooks(sequences: [Int64]) throws -> Int
    /// Rows of this node (count), for the queue bound at start.
    func webhookCount() throws -> Int
    /// Deletes this node's rows for receivers no longer configured; returns how many.
    func deleteWebhooks(notTargeting targets: [String]) throws -> Int
    /// Makes the rows of nodes whose lease ran out this node's (PostgreSQL: a node that died left them); returns
    /// how many. SQLite has one node: 0.
    func adoptOrphanedWebhooks() throws -> Int
}

/// Told about every batch's notices inside its transaction, before the commit (the webhook outbox writes its rows
/// there); a throw fails the whole batch. `committed` follows once that batch has committed.
public protocol RoomNoticeRecorder: Sendable {
    func record(_ notices: [RoomNotice], in transaction: any RoomTransaction) throws
    func committed()
}

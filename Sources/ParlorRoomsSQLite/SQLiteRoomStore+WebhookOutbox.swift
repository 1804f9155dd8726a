import ParlorRooms
import ParlorStore

// The webhook outbox (Migrations/009_webhook_outbox.sql): rows in commit order, one per webhook and receiver.
extension SQLiteRoomTransaction: WebhookOutboxTransaction {
    func appendWebhooks(_ entries: [WebhookOutboxEntry]) throws {
        for entry in entries {
            try db.run("INSERT INTO webhook_outbox (target, event, body, created_at) VALUES (?, ?, ?, ?)",
                       [.text(entry.target), .text(entry.event), .blob(entry.body), .integer(entry.createdAt)])
        }
    }

    func dropOldestWebhooks(_ count: Int) throws -> Int {
        try db.run("DELETE FROM webhook_outbox WHERE sequence IN (SELECT sequence FROM webhook_outbox ORDER BY sequence LIMIT ?)",
                   [.integer(Int64(count))])
    }
}

/// The delivery side over SQLite: pages through a reader, deletes through the writer (between rooms batches).
public struct SQLiteWebhookOutbox: WebhookOutboxStore {
    let database: Database

    public init(database: Database) {
        self.database = database
    }

    public func pendingWebhooks(target: String, limit: Int) throws -> [WebhookOutboxRow] {
        try database.read { db in
            try db.query("SELECT sequence, event, body, created_at FROM webhook_outbox WHERE target = ? ORDER BY sequence LIMIT ?",
                         [.text(target), .integer(Int64(limit))]).map { $0.webhookOutboxRow(target: target) }
        }
    }

    public func deleteWebhooks(sequences: [Int64]) throws -> Int {
        guard !sequences.isEmpty else { return 0 }
        return try database.write { db in
            try sequences.reduce(0) { deleted, sequence in
                deleted + (try db.run("DELETE FROM webhook_outbox WHERE sequence = ?", [.integer(sequence)]))
            }
        }
    }

    public func webhookCount() throws -> Int {
        Int(try database.read { try $0.queryInteger("SELECT COUNT(*) FROM webhook_outbox") } ?? 0)
    }

    public func deleteWebhooks(notTargeting targets: [String]) throws -> Int {
        try database.write { db in
            let kept = Set(targets)
            let stale = try db.query("SELECT DISTINCT target FROM webhook_outbox").compactMap { $0.string("target") }.filter { !kept.contains($0) }
            return try stale.reduce(0) { deleted, target in
                deleted + (try db.run("DELETE FROM webhook_outbox WHERE target = ?", [.text(target)]))
            }
        }
    }

    public func adoptOrphanedWebhooks() throws -> Int { 0 }
}

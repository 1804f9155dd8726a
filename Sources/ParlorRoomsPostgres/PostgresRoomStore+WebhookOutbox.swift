import ParlorPostgres
import ParlorRooms
import ParlorStore

// The webhook outbox (Migrations/postgres/005_webhook_outbox.sql): each node's rows, in commit order.
extension PostgresRoomTransaction: WebhookOutboxTransaction {
    func appendWebhooks(_ entries: [WebhookOutboxEntry]) throws {
        for entry in entries {
            try db.run("INSERT INTO webhook_outbox (node_id, target, event, body, created_at) VALUES ($1, $2, $3, $4, $5)",
                       [.text(nodeID), .text(entry.target), .text(entry.event), .blob(entry.body), .integer(entry.createdAt)])
        }
    }

    func dropOldestWebhooks(_ count: Int) throws -> Int {
        try db.run("""
            DELETE FROM webhook_outbox WHERE sequence IN
                (SELECT sequence FROM webhook_outbox WHERE node_id = $1 ORDER BY sequence LIMIT $2)
            """, [.text(nodeID), .integer(Int64(count))])
    }
}

/// The delivery side over PostgreSQL: a node pages through and deletes its own rows on pool connections, and takes
/// over the rows of nodes whose lease ran out (a node that died, or stopped, with webhooks undelivered).
public struct PostgresWebhookOutbox: WebhookOutboxStore {
    let database: PostgresDatabase
    let nodeID: String

    public init(store: PostgresRoomStore) {
        database = store.database
        nodeID = store.nodeID
    }

    public func pendingWebhooks(target: String, limit: Int) throws -> [WebhookOutboxRow] {
        try database.read { db in
            try db.query("""
                SELECT sequence, event, body, created_at FROM webhook_outbox WHERE node_id = $1 AND target = $2
                ORDER BY sequence LIMIT $3
                """, [.text(nodeID), .text(target), .integer(Int64(limit))]).map { $0.webhookOutboxRow(target: target) }
        }
    }

    public func deleteWebhooks(sequences: [Int64]) throws -> Int {
        guard !sequences.isEmpty else { return 0 }
        return try database.writeOnPool { db in
            try db.run("DELETE FROM webhook_outbox WHERE node_id = $1 AND sequence = ANY(string_to_array($2, ' ')::bigint[])",
                       [.text(nodeID), .text(sequences.map(String.init).joined(separator: " "))])
        }
    }

    public func webhookCount() throws -> Int {
        Int(try database.read { try $0.queryOne("SELECT COUNT(*) AS n FROM webhook_outbox WHERE node_id = $1", [.text(nodeID)]) }?
            .int("n") ?? 0)
    }

    public func deleteWebhooks(notTargeting targets: [String]) throws -> Int {
        try database.writeOnPool { db in
            try db.run("DELETE FROM webhook_outbox WHERE node_id = $1 AND NOT (target = ANY(string_to_array($2, ' ')))",
                       [.text(nodeID), .text(targets.joined(separator: " "))])
        }
    }

    /// A node's rows are another's once its lease has run out: whichever live node asks first takes them (a second
    /// asking at once finds them a live node's, when PostgreSQL re-checks the row it waited for).
    public func adoptOrphanedWebhooks() throws -> Int {
        try database.writeOnPool { db in
            try db.run("""
                UPDATE webhook_outbox SET node_id = $1 WHERE node_id <> $1 AND NOT EXISTS
                    (SELECT 1 FROM nodes WHERE nodes.id = webhook_outbox.node_id AND nodes.lease_until >= \(PostgresRoomTransaction.databaseNow))
                """, [.text(nodeID)])
        }
    }
}

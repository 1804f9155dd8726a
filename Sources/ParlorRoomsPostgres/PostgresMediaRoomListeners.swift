import ParlorPostgres
import ParlorStore

/// The `media_room_listeners` table (Migrations/postgres/012): which nodes listen in which rooms, so the nodes with
/// speakers there know where to send them (issue 41). Every call blocks on the database: call it off the event loops.
public struct PostgresMediaRoomListeners: Sendable {
    let database: PostgresDatabase
    let nodeID: String

    public init(database: PostgresDatabase, nodeID: String) {
        self.database = database
        self.nodeID = nodeID
    }

    /// This node now listens in `added` and no longer in `removed`.
    public func update(added: Set<String>, removed: Set<String>) throws {
        guard !added.isEmpty || !removed.isEmpty else { return }
        _ = try database.writeOnPool { connection in
            if !added.isEmpty {
                try connection.run("""
                    INSERT INTO media_room_listeners (room_id, node_id) SELECT r, $2 FROM unnest(string_to_array($1, ',')) AS r
                    ON CONFLICT DO NOTHING
                    """, [.text(added.sorted().joined(separator: ",")), .text(nodeID)])
            }
            if !removed.isEmpty {
                try connection.run("DELETE FROM media_room_listeners WHERE node_id = $2 AND room_id = ANY(string_to_array($1, ','))",
                                   [.text(removed.sorted().joined(separator: ",")), .text(nodeID)])
            }
        }
    }

    /// Deletes this node's rows (a clean stop), and those of nodes that no longer have a `nodes` row.
    public func removeOwnAndGone() throws {
        _ = try database.writeOnPool {
            try $0.run("""
                DELETE FROM media_room_listeners l WHERE l.node_id = $1 OR NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = l.node_id)
                """, [.text(nodeID)])
        }
    }

    /// For each of `rooms`, the other nodes listening there that hold a lease now.
    public func listeners(in rooms: Set<String>) throws -> [String: Set<String>] {
        guard !rooms.isEmpty else { return [:] }
        let rows = try database.read {
            try $0.query("""
                SELECT l.room_id, l.node_id FROM media_room_listeners l JOIN nodes n ON n.id = l.node_id
                WHERE l.room_id = ANY(string_to_array($1, ',')) AND l.node_id <> $2
                  AND n.lease_until >= \(PostgresRoomTransaction.databaseNow)
                """, [.text(rooms.sorted().joined(separator: ",")), .text(nodeID)])
        }
        var result: [String: Set<String>] = [:]
        for row in rows {
            guard let room = row.string("room_id"), let node = row.string("node_id") else { continue }
            result[room, default: []].insert(node)
        }
        return result
    }
}

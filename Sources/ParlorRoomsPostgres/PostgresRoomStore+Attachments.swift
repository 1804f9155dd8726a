import ParlorPostgres
import ParlorRooms
import ParlorStore

// Which nodes have a connection of a member attached (`member_attachments`, Migrations/postgres/004): the member
// stays present while any live node has one, and is handed to such a node when its holder's last one closes.
extension PostgresRoomTransaction: ClusterAttachmentTransaction {
    /// SQL for a `WHERE` on `members`: a live node other than the one in parameter `$n` (this one) has a connection
    /// of the member attached.
    static func attachedOnAnotherLiveNode(nodeParameter n: Int) -> String {
        """
        EXISTS (SELECT 1 FROM member_attachments a JOIN nodes n ON n.id = a.node_id
                WHERE a.member_id = members.id AND a.node_id <> $\(n) AND n.lease_until >= \(databaseNow))
        """
    }

    func recordAttachment(memberID: String) throws {
        try db.run("INSERT INTO member_attachments (member_id, node_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                   [.text(memberID), .text(nodeID)])
    }

    func releaseAttachment(memberID: String, at time: Int64) throws -> Int64? {
        // KEY SHARE on the other node's row: a takeover deleting it (its first statement) waits for this commit and
        // then sees the member handed over; or this waits for the takeover and finds that node gone. Heartbeats,
        // which only update the lease, do not conflict with it.
        let heir = try db.queryOne("""
            SELECT a.node_id FROM member_attachments a JOIN nodes n ON n.id = a.node_id
            WHERE a.member_id = $1 AND a.node_id <> $2 AND n.lease_until >= \(Self.databaseNow)
            ORDER BY a.node_id LIMIT 1 FOR KEY SHARE OF n
            """, [.text(memberID), .text(nodeID)])?.string("node_id")
        try db.run("DELETE FROM member_attachments WHERE member_id = $1 AND node_id = $2", [.text(memberID), .text(nodeID)])
        if let heir {
            // Held here (or by a node with no connection of it, whose join or resume failed halfway): handed over.
            try db.run("""
                UPDATE members SET node_id = $2, disconnected_at = NULL WHERE id = $1 AND state = 'JOINED'
                AND (node_id IS NULL OR NOT EXISTS (SELECT 1 FROM member_attachments a WHERE a.member_id = members.id AND a.node_id = members.node_id))
                """, [.text(memberID), .text(heir)])
            return nil
        }
        // No connection anywhere: held here, away (since earlier if it already was), so this node drops it.
        let row = try db.queryOne("""
            UPDATE members SET node_id = $2, disconnected_at = COALESCE(disconnected_at, $3) WHERE id = $1 AND state = 'JOINED'
            RETURNING disconnected_at
            """, [.text(memberID), .text(nodeID), .integer(time)])
        return row?.int("disconnected_at") ?? time
    }
}

import ParlorPostgres
import ParlorRooms
import ParlorStore

// Memberships: JOINED → (disconnected within the grace period) → LEFT with a reason, each recorded with the node
// that holds it (their reads and media state are ParlorRooms' shared SQL).
extension PostgresRoomTransaction {
    func addMember(id: String, roomID: String, userID: String, joinedAt: Int64) throws {
        try db.run("INSERT INTO members (id, room_id, user_id, state, joined_at, node_id) VALUES ($1, $2, $3, 'JOINED', $4, $5)",
                   [.text(id), .text(roomID), .text(userID), .integer(joinedAt), .text(nodeID)])
    }

    func endMembership(memberID: String, reason: LeaveReason, at time: Int64) throws {
        try db.run("""
            UPDATE members SET state = 'LEFT', left_at = $1, left_reason = $2, disconnected_at = NULL
            WHERE id = $3 AND state = 'JOINED'
            """, [.integer(time), .text(reason.rawValue), .text(memberID)])
        try db.run("DELETE FROM member_attachments WHERE member_id = $1", [.text(memberID)])
    }

    /// Present again: this node holds the member from now on. Away: only if this node (or none) holds it, so a
    /// connection closing here does not start the grace period of a member resumed on another node.
    func setDisconnected(memberID: String, since time: Int64?) throws {
        guard let time else {
            try db.run("UPDATE members SET disconnected_at = NULL, node_id = $2 WHERE id = $1", [.text(memberID), .text(nodeID)])
            return
        }
        try db.run("UPDATE members SET disconnected_at = $1 WHERE id = $2 AND (node_id IS NULL OR node_id = $3)",
                   [.integer(time), .text(memberID), .text(nodeID)])
    }
}

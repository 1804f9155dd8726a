import ParlorRooms
import ParlorStore

// Memberships: JOINED → (disconnected within the grace period) → LEFT with a reason (their reads and media state are
// ParlorRooms' shared SQL).
extension SQLiteRoomTransaction {
    func addMember(id: String, roomID: String, userID: String, joinedAt: Int64) throws {
        try db.run("INSERT INTO members (id, room_id, user_id, state, joined_at) VALUES (?, ?, ?, 'JOINED', ?)",
                   [.text(id), .text(roomID), .text(userID), .integer(joinedAt)])
    }

    func endMembership(memberID: String, reason: LeaveReason, at time: Int64) throws {
        try db.run("""
            UPDATE members SET state = 'LEFT', left_at = ?, left_reason = ?, disconnected_at = NULL
            WHERE id = ? AND state = 'JOINED'
            """, [.integer(time), .text(reason.rawValue), .text(memberID)])
    }

    func setDisconnected(memberID: String, since time: Int64?) throws {
        try db.run("UPDATE members SET disconnected_at = ? WHERE id = ?", [SQLValue(time), .text(memberID)])
    }
}

import ParlorRooms
import ParlorStore

// Sessions: one per WebSocket connection, resumable for the grace period after it ended (`sessionOwner` is
// ParlorRooms' shared SQL).
extension SQLiteRoomTransaction {
    func openSession(id: String, userID: String, at time: Int64) throws {
        try db.run("INSERT INTO sessions (id, user_id, created_at) VALUES (?, ?, ?)", [.text(id), .text(userID), .integer(time)])
    }

    func endSession(id: String, at time: Int64) throws {
        try db.run("UPDATE sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL", [.integer(time), .text(id)])
    }

    func deleteSessions(endedBefore time: Int64, limit: Int) throws -> Int {
        try db.run("DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE ended_at < ? LIMIT ?)",
                   [.integer(time), .integer(Int64(limit))])
    }
}

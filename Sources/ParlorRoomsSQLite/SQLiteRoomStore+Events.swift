import ParlorProtocol
import ParlorRooms
import ParlorStore

// Events: a room's history, numbered per room in commit order.
extension SQLiteRoomTransaction {
    /// The id is the room's highest stored `seq` plus one, read in this transaction from the end of the room's range
    /// of the events primary key, the page the insert then writes (migration 006): the writer holds SQLite's one
    /// write lock until the commit, so ids are handed out in commit order, and a rolled-back savepoint takes its ids
    /// with it. (Not `INSERT … RETURNING`: SQLite builds an ephemeral table for RETURNING, about 23,000 more
    /// instructions per stored event under callgrind.)
    func appendEvent(roomID: String, type: String, from: String?, encodedBody: [UInt8], at time: Int64) throws -> EventRecord {
        guard let id = try db.queryInteger("SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE room_id = ?", [.text(roomID)]) else {
            throw RoomError.notFound(roomID)
        }
        do {
            try db.run("INSERT INTO events (room_id, seq, type, from_member, body, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                       [.text(roomID), .integer(id), .text(type), SQLValue(from), .text(String(decoding: encodedBody, as: UTF8.self)),
                        .integer(time)])
        } catch let error as StoreError where error.isForeignKeyViolation {
            throw RoomError.notFound(roomID)
        }
        return EventRecord(roomID: roomID, id: id, type: type, from: from, encodedBody: encodedBody, createdAt: time)
    }

    /// The oldest first, by the primary key: a bounded delete whatever the room's history. Never the room's newest
    /// event (the caller keeps at least one), from which the next id comes.
    func pruneEvents(roomID: String, through: Int64, limit: Int) throws -> Int {
        try db.run("""
            DELETE FROM events WHERE room_id = ?1 AND seq IN
                (SELECT seq FROM events WHERE room_id = ?1 AND seq <= ?2 ORDER BY seq LIMIT ?3)
            """, [.text(roomID), .integer(through), .integer(Int64(limit))])
    }
}

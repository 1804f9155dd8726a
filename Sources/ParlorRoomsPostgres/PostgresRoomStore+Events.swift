import ParlorPostgres
import ParlorProtocol
import ParlorRooms
import ParlorStore

// Events: a room's history, numbered per room in commit order; and sessions.
extension PostgresRoomTransaction {
    /// The id comes from the room's row, incremented in this transaction: the update locks the row until the
    /// commit, so another writer of the same room waits and takes the next id, and commit order is id order.
    /// One round trip: the increment, the insert and the NOTIFY that other nodes receive once this commits
    /// (PostgreSQL delivers notifications at the commit, in commit order, and drops them on a rollback).
    func appendEvent(roomID: String, type: String, from: String?, encodedBody: [UInt8], at time: Int64) throws -> EventRecord {
        guard let id = try db.queryOne("""
            WITH next AS (UPDATE rooms SET last_event_id = last_event_id + 1 WHERE id = $1 RETURNING id, last_event_id),
                 added AS (INSERT INTO events (room_id, seq, type, from_member, body, created_at)
                           SELECT id, last_event_id, $2, $3, $4, $5 FROM next RETURNING room_id, seq)
            SELECT seq, pg_notify('\(PostgresClusterLink.channel)', room_id || ' ' || seq) AS notified FROM added
            """, [.text(roomID), .text(type), SQLValue(from), .text(String(decoding: encodedBody, as: UTF8.self)),
                 .integer(time)])?.int("seq") else {
            throw RoomError.notFound(roomID)
        }
        return EventRecord(roomID: roomID, id: id, type: type, from: from, encodedBody: encodedBody, createdAt: time)
    }

    /// The oldest first, by the primary key: a bounded delete whatever the room's history (ids come from the room's
    /// counter here, so pruning never changes them).
    func pruneEvents(roomID: String, through: Int64, limit: Int) throws -> Int {
        try db.run("""
            DELETE FROM events WHERE room_id = $1 AND seq IN
                (SELECT seq FROM events WHERE room_id = $1 AND seq <= $2 ORDER BY seq LIMIT $3)
            """, [.text(roomID), .integer(through), .integer(Int64(limit))])
    }

    func openSession(id: String, userID: String, at time: Int64) throws {
        try db.run("INSERT INTO sessions (id, user_id, created_at, node_id) VALUES ($1, $2, $3, $4)",
                   [.text(id), .text(userID), .integer(time), .text(nodeID)])
    }

    func endSession(id: String, at time: Int64) throws {
        try db.run("UPDATE sessions SET ended_at = $1 WHERE id = $2 AND ended_at IS NULL", [.integer(time), .text(id)])
    }

    func deleteSessions(endedBefore time: Int64, limit: Int) throws -> Int {
        try db.run("DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE ended_at < $1 LIMIT $2)",
                   [.integer(time), .integer(Int64(limit))])
    }
}

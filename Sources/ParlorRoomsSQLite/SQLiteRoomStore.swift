import ParlorRooms
import ParlorStore

/// The rooms domain's record in SQLite: the writer connection for the rooms thread's batches, the reader pool for
/// everyone else. The SQL both dialects share is ParlorRooms' (SQLRoomReading, SQLRoomWriting); SQLite's own is in
/// SQLiteRoomStore+Rooms/Members/Events/Sessions.swift. Statements are prepared once per connection and reused by
/// their text.
public final class SQLiteRoomStore: SQLRoomStore {
    public let database: Database

    public init(database: Database) {
        self.database = database
    }

    /// On a reader connection from the pool (the writer, for `:memory:`).
    public func reader(on connection: SQLiteConnection) -> any RoomReader { SQLiteRoomReader(db: connection) }

    public func transaction(on connection: SQLiteConnection) -> any RoomTransaction { SQLiteRoomTransaction(db: connection) }
}

/// SQLite's reads, shared by the reader and the write transaction.
protocol SQLiteRoomReading: SQLRoomReading where Connection == SQLiteConnection {}

extension SQLiteRoomReading {
    /// `last_event_id` from the events primary key (SQLite's rooms have no such column), and the JOINED count
    /// through the partial index members_one_joined.
    static var roomColumns: String {
        """
        r.id, r.name, r.display_name, r.created_by, r.created_at, r.closed_at, r.ttl, r.max_members, r.mode, r.locked, r.e2ee, r.stream_public,
        (SELECT COALESCE(MAX(e.seq), 0) FROM events e WHERE e.room_id = r.id) AS last_event_id,
        (SELECT COUNT(*) FROM members m INDEXED BY members_one_joined WHERE m.room_id = r.id AND m.state = 'JOINED') AS member_count
        """
    }

    /// Named with INDEXED BY: without statistics SQLite would pick members_by_room for its order and walk the room's
    /// whole history (migration 007).
    static var joinedMemberTables: String {
        "members m INDEXED BY members_one_joined JOIN users u ON u.id = m.user_id "
            + "LEFT JOIN room_users ru ON ru.room_id = m.room_id AND ru.user_id = m.user_id"
    }
}

struct SQLiteRoomReader: SQLiteRoomReading {
    let db: SQLiteConnection
}

struct SQLiteRoomTransaction: SQLiteRoomReading, SQLRoomWriting {
    let db: SQLiteConnection

    /// SQLite ends the transaction by itself after some failures (e.g. SQLITE_FULL).
    var isActive: Bool { db.isInTransaction }
}

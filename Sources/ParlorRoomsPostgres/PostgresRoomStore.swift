import ParlorPostgres
import ParlorRooms
import ParlorStore

/// The rooms domain's record in PostgreSQL: the writer connection for the rooms thread's batches (READ COMMITTED,
/// a savepoint per command), the pool's snapshots (REPEATABLE READ) for everyone else. Its SQL is in
/// ParlorRooms' shared SQL (SQLRoomReading, SQLRoomWriting) and PostgresRoomStore+Rooms/Members/Events/Cluster.swift,
/// statements prepared once per connection.
public final class PostgresRoomStore: SQLRoomStore {
    public let database: PostgresDatabase
    /// The node this process is among those sharing the database: recorded on the memberships and sessions it holds.
    public let nodeID: String

    public init(database: PostgresDatabase, nodeID: String = Identifier.make(Identifier.node)) {
        self.database = database
        self.nodeID = nodeID
    }

    public func reader(on connection: PostgresConnection) -> any RoomReader { PostgresRoomReader(db: connection) }

    public func transaction(on connection: PostgresConnection) -> any RoomTransaction {
        PostgresRoomTransaction(db: connection, nodeID: nodeID)
    }
}

/// PostgreSQL's reads, shared by the reader and the write transaction.
protocol PostgresRoomReading: SQLRoomReading where Connection == PostgresConnection {}

extension PostgresRoomReading {
    /// `last_event_id` is a column of PostgreSQL's rooms (the next event's id comes from it).
    static var roomColumns: String {
        """
        r.id, r.name, r.display_name, r.created_by, r.created_at, r.closed_at, r.ttl, r.max_members, r.last_event_id, r.mode, r.locked, r.e2ee, r.stream_public,
        (SELECT COUNT(*) FROM members m WHERE m.room_id = r.id AND m.state = 'JOINED') AS member_count
        """
    }

    static var joinedMemberTables: String { memberTables }
}

struct PostgresRoomReader: PostgresRoomReading {
    let db: PostgresConnection
}

struct PostgresRoomTransaction: PostgresRoomReading, SQLRoomWriting {
    let db: PostgresConnection
    let nodeID: String

    /// A statement that failed aborts the transaction until the savepoint's rollback (`withSavepoint`).
    var isActive: Bool { db.canCommit }
}

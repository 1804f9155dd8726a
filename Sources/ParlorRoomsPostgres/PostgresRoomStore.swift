import ParlorPostgres
import ParlorRooms
import ParlorStore

/// The rooms domain's record in PostgreSQL: the writer connection for the rooms thread's batches (READ COMMITTED,
/// a savepoint per command), the pool's snapshots (REPEATABLE READ) for everyone else. Its SQL is in
/// PostgresRoomStore+Rooms/Members/Events/Stage.swift, statements prepared once per connection.
public final class PostgresRoomStore: RoomStore {
    public let database: PostgresDatabase
    /// The node this process is among those sharing the database: recorded on the memberships and sessions it holds.
    public let nodeID: String

    public init(database: PostgresDatabase, nodeID: String = Identifier.make(Identifier.node)) {
        self.database = database
        self.nodeID = nodeID
    }

    public func write<T>(_ body: (any RoomTransaction) throws -> T) throws -> T {
        try database.write { db in try body(PostgresRoomTransaction(db: db, nodeID: nodeID)) }
    }

    public func read<T>(_ body: (any RoomReader) throws -> T) throws -> T {
        try database.read { db in try body(PostgresRoomReader(db: db)) }
    }

    /// Lost connections, a server shutting down, a full disk, I/O errors: requesters are told to try later.
    public func isStorageFailure(_ error: any Error) -> Bool {
        (error as? PostgresError)?.isStorageFailure == true
    }
}

/// The reads, shared by the reader and the write transaction.
protocol PostgresRoomReading: RoomReader {
    var db: PostgresConnection { get }
}

struct PostgresRoomReader: PostgresRoomReading {
    let db: PostgresConnection
}

struct PostgresRoomTransaction: PostgresRoomReading, RoomTransaction {
    let db: PostgresConnection
    let nodeID: String

    /// A statement that fails aborts a PostgreSQL transaction until the rollback to the savepoint, which undoes
    /// the command and lets the batch go on, as in SQLite.
    func withSavepoint<T>(_ body: () throws -> T) throws -> T {
        try db.execute("SAVEPOINT command")
        do {
            let result = try body()
            try db.execute("RELEASE SAVEPOINT command")
            return result
        } catch {
            // Throws in turn if the connection is gone (the whole transaction with it).
            try db.execute("ROLLBACK TO SAVEPOINT command")
            try db.execute("RELEASE SAVEPOINT command")
            throw error
        }
    }

    var isActive: Bool { db.canCommit }

    /// Test mode's reset.
    func deleteEverything() throws {
        try db.execute("DELETE FROM events; DELETE FROM room_users; DELETE FROM room_bans; DELETE FROM members; DELETE FROM rooms; DELETE FROM sessions; DELETE FROM users;")
    }
}

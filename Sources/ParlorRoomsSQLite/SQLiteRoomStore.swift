import ParlorRooms
import ParlorStore

/// The rooms domain's record in SQLite: the writer connection for the rooms thread's batches, the reader pool for
/// everyone else. Its SQL is in SQLiteRoomStore+Rooms/Members/Events/Sessions.swift; statements are prepared once
/// per connection and reused by their text.
public final class SQLiteRoomStore: RoomStore {
    let database: Database

    public init(database: Database) {
        self.database = database
    }

    public func write<T>(_ body: (any RoomTransaction) throws -> T) throws -> T {
        try database.write { db in try body(SQLiteRoomTransaction(db: db)) }
    }

    /// A reader connection from the pool (the writer, for `:memory:`).
    public func read<T>(_ body: (any RoomReader) throws -> T) throws -> T {
        try database.read { db in try body(SQLiteRoomReader(db: db)) }
    }

    public func isStorageFailure(_ error: any Error) -> Bool {
        (error as? StoreError)?.isStorageFailure == true
    }
}

/// The reads, shared by the reader and the write transaction (SQLiteRoomStore+Rooms/Members/Events.swift).
protocol SQLiteRoomReading: RoomReader {
    var db: SQLiteConnection { get }
}

struct SQLiteRoomReader: SQLiteRoomReading {
    let db: SQLiteConnection
}

struct SQLiteRoomTransaction: SQLiteRoomReading, RoomTransaction {
    let db: SQLiteConnection

    /// Through cached prepared statements (`run`), not `execute`: every command opens and releases one, and
    /// `sqlite3_exec` parses the SQL text each time.
    func withSavepoint<T>(_ body: () throws -> T) throws -> T {
        try db.run("SAVEPOINT command")
        do {
            let result = try body()
            try db.run("RELEASE command")
            return result
        } catch {
            // Throws in turn if the database already ended the whole transaction.
            try db.run("ROLLBACK TO command")
            try db.run("RELEASE command")
            throw error
        }
    }

    var isActive: Bool { db.isInTransaction }

    /// Test mode's reset.
    func deleteEverything() throws {
        try db.execute("DELETE FROM events; DELETE FROM room_users; DELETE FROM room_bans; DELETE FROM members; DELETE FROM rooms; DELETE FROM sessions; DELETE FROM users;")
    }
}

/// What a connection of either database layer offers (SQLiteConnection here, PostgresConnection in ParlorPostgres):
/// statements with `SQLValue` parameters and `Row` results. The pool, the migrator and the SQL the room stores share
/// are written once against it.
///
/// Parameters are numbered `$1`, `$2`, … in both dialects (SQLite reads them as `?1`, `?2`, …), so one SQL text
/// serves both where the statement is the same.
public protocol SQLConnection: AnyObject {
    /// Runs a script of one or more statements without parameters (migrations, pragmas, BEGIN).
    func execute(_ sql: String) throws
    /// Runs one statement and returns how many rows it inserted, updated or deleted.
    @discardableResult
    func run(_ sql: String, _ parameters: [SQLValue]) throws -> Int
    /// Runs one statement and returns all its rows.
    func query(_ sql: String, _ parameters: [SQLValue]) throws -> [Row]
    /// Runs one statement and returns its first row, if any.
    func queryOne(_ sql: String, _ parameters: [SQLValue]) throws -> Row?
    /// True while a transaction is open, including one an error aborted.
    var isInTransaction: Bool { get }
    /// Ends the session; later calls throw. Idempotent. Only the connection's owner (a database or its pool) calls it.
    func close()
}

/// A database of either layer (`Database`, ParlorPostgres' `PostgresDatabase`) as the stores above use it: the
/// serialized write transaction, snapshot reads from any thread, and which of its errors mean the storage failed.
public protocol SQLDatabase: AnyObject, Sendable {
    associatedtype Connection: SQLConnection
    /// Runs `body` in the write transaction on the writer connection and commits; rolls back and rethrows on a throw.
    func write<T>(_ body: (Connection) throws -> T) throws -> T
    /// Runs a read-only `body` in one transaction (one snapshot), beside writes where the database allows.
    func read<T>(_ body: (Connection) throws -> T) throws -> T
    /// Runs `body` in a short write transaction from any thread (users, secrets): PostgreSQL on a pool connection,
    /// beside the rooms thread's batch; SQLite, with its one writer, in `write`.
    func shortWrite<T>(_ body: (Connection) throws -> T) throws -> T
    /// The storage failed rather than the statement (disk full, I/O error, a lost server): requesters try later.
    static func isStorageFailure(_ error: any Error) -> Bool
}

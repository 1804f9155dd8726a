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

// Transactions shared by writes, reads and migrations.
extension SQLiteConnection {
    /// Runs `body` between `begin` (e.g. `BEGIN IMMEDIATE`) and `COMMIT`; rolls back if
    /// `body` or the commit throws, and rethrows.
    /// BEGIN and COMMIT go through cached prepared statements (`run`): a batch of commands commits many times a
    /// second, and `sqlite3_exec` would parse the text every time.
    func inTransaction<T>(_ begin: String, _ body: (SQLiteConnection) throws -> T) throws -> T {
        _ = try run(begin)
        do {
            let result = try body(self)
            _ = try run("COMMIT")
            return result
        } catch {
            // SQLite may already have rolled back by itself (e.g. on SQLITE_FULL).
            if !isAutocommit { try? execute("ROLLBACK") }
            throw error
        }
    }
}

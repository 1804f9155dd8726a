// Transactions shared by writes, reads and migrations.
extension SQLiteConnection {
    /// Runs `body` between `begin` (e.g. `BEGIN IMMEDIATE`) and `COMMIT`; rolls back if
    /// `body` or the commit throws, and rethrows.
    func inTransaction<T>(_ begin: String, _ body: (SQLiteConnection) throws -> T) throws -> T {
        try execute(begin)
        do {
            let result = try body(self)
            try execute("COMMIT")
            return result
        } catch {
            // SQLite may already have rolled back by itself (e.g. on SQLITE_FULL).
            if !isAutocommit { try? execute("ROLLBACK") }
            throw error
        }
    }
}

// Bringing the schema up to date on the writer connection: SQLite's step of the shared migrator.
extension SQLiteConnection {
    /// Applies the `migrations` the database lacks (`SQLConnection.migrate`), each in its own transaction.
    func migrate(to migrations: [Migration], report: (@Sendable (MigrationProgress) -> Void)? = nil) throws {
        try migrate(to: migrations, integerType: "INTEGER", report: report, applyStep: apply)
    }

    /// Runs the migration and records it atomically: on failure neither its changes nor its record remain.
    /// Foreign keys are off while it runs, so a table can be rebuilt (SQLite's 12-step ALTER), and
    /// `PRAGMA foreign_key_check` before the commit refuses a step that leaves a row without its parent.
    private func apply(_ migration: Migration) throws {
        // The pragma is a no-op inside a transaction, so it is switched around the step's transaction.
        try execute("PRAGMA foreign_keys=OFF")
        defer { try? execute("PRAGMA foreign_keys=ON") }
        do {
            try inTransaction("BEGIN IMMEDIATE") { connection in
                try connection.execute(migration.sql)
                let violations = try connection.query("PRAGMA foreign_key_check").map { row in
                    "\(row.string("table") ?? "?") row \(row.int("rowid").map(String.init) ?? "?") → \(row.string("parent") ?? "?")"
                }
                guard violations.isEmpty else {
                    throw MigrationError.foreignKeyViolation(id: migration.id, violations: violations)
                }
                try connection.recordApplied(migration)
            }
        } catch let error as StoreError {
            throw MigrationError.failed(id: migration.id, underlying: error)
        }
    }
}

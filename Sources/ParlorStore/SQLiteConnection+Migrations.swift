import Foundation

/// What `schema_migrations` records about one applied migration.
struct AppliedMigration {
    var id: String
    var checksum: String
    var appliedAt: Int64
}

// Bringing the schema up to date on the writer connection.
extension SQLiteConnection {
    /// Applies the `migrations` the database lacks, in id order, each in its own transaction, telling `report` before
    /// and after. Checks everything first, so a changed or unknown migration stops the start before any change.
    func migrate(to migrations: [Migration], report: (@Sendable (MigrationProgress) -> Void)? = nil) throws {
        try execute("""
            CREATE TABLE IF NOT EXISTS schema_migrations (
                id         TEXT PRIMARY KEY,
                checksum   TEXT NOT NULL,
                applied_at INTEGER NOT NULL
            )
            """)

        let pending = try Migration.pending(migrations, applied: try appliedMigrations().map { ($0.id, $0.checksum) })
        guard !pending.isEmpty else { return }
        let ids = pending.map(\.id)
        report?(.applying(ids))
        let started = ContinuousClock.now
        for migration in pending {
            try apply(migration)
        }
        report?(.applied(ids, seconds: (ContinuousClock.now - started).seconds))
    }

    /// The rows of `schema_migrations`, in id order.
    func appliedMigrations() throws -> [AppliedMigration] {
        try query("SELECT id, checksum, applied_at FROM schema_migrations ORDER BY id").map { row in
            AppliedMigration(
                id: row.string("id") ?? "", checksum: row.string("checksum") ?? "", appliedAt: row.int("applied_at") ?? 0)
        }
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
                try connection.run(
                    "INSERT INTO schema_migrations (id, checksum, applied_at) VALUES (?, ?, ?)",
                    [.text(migration.id), .text(migration.checksum), .integer(Self.nowMilliseconds())])
            }
        } catch let error as StoreError {
            throw MigrationError.failed(id: migration.id, underlying: error)
        }
    }

    /// Unix milliseconds, the unit of every time column in the schema.
    private static func nowMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }
}

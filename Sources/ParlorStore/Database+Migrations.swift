// Reporting which migrations the database has.
extension Database {
    /// Every applied migration in id order, with when (Unix ms) and the checksum it had.
    public func migrationStatus() throws -> [(id: String, appliedAt: Int64, checksum: String)] {
        try read { connection in
            // A database no migration has touched yet has no bookkeeping table.
            guard try connection.queryOne("SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'") != nil else {
                return []
            }
            return try connection.appliedMigrations().map { ($0.id, $0.appliedAt, $0.checksum) }
        }
    }
}

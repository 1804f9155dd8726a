// Reporting which migrations the database has.
extension Database {
    /// Every applied migration in id order, with when (Unix ms) and the checksum it had.
    public func migrationStatus() throws -> [(id: String, appliedAt: Int64, checksum: String)] {
        try read { connection in
            try connection.appliedMigrations().map { ($0.id, $0.appliedAt, $0.checksum) }
        }
    }
}

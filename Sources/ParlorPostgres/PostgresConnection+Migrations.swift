import ParlorStore

// Bringing the schema up to date, once, however many nodes start at the same time: PostgreSQL's step of the shared
// migrator (`SQLConnection.migrate`).
extension PostgresConnection {
    /// Serialises migrators across every node sharing the database (an arbitrary constant: "parlor" in ASCII).
    static let migrationLockKey: Int64 = 0x7061_726C_6F72

    /// Applies the `migrations` the database lacks, in id order, each in its own transaction, holding the advisory
    /// lock so that nodes starting together wait for the first one and then find nothing to do. Checks everything
    /// first: a changed or unknown migration stops the start before any change. Tells `report` before and after, as
    /// SQLite's migrator does (`DatabaseConfiguration.reportMigrations`). Returns the ids it applied.
    func migrate(to migrations: [Migration], report: (@Sendable (MigrationProgress) -> Void)? = nil) throws -> [String] {
        try reconnectIfNeeded()
        try execute("SELECT pg_advisory_lock(\(Self.migrationLockKey))")
        // Also released if the connection dies: the lock is the session's.
        defer { try? execute("SELECT pg_advisory_unlock(\(Self.migrationLockKey))") }
        return try migrate(to: migrations, integerType: "BIGINT", report: report) { migration in
            do {
                try inTransaction { connection in
                    try connection.execute(migration.sql)
                    try connection.recordApplied(migration)
                }
            } catch let error as PostgresError {
                throw PostgresError(sqlState: error.sqlState, message: "migration \(migration.id) failed and was rolled back: \(error.message)",
                                    connectionLost: error.connectionLost)
            }
        }
    }
}

extension PostgresDatabase {
    /// Every applied migration in id order, with when (Unix ms) and the checksum it had.
    public func migrationStatus() throws -> [(id: String, appliedAt: Int64, checksum: String)] {
        try read { connection in
            guard try connection.queryOne("SELECT to_regclass('schema_migrations') IS NOT NULL AS found")?.bool("found") == true else {
                return []
            }
            return try connection.appliedMigrations().map { ($0.id, $0.appliedAt, $0.checksum) }
        }
    }
}

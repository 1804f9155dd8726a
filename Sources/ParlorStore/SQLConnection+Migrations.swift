import Foundation

/// What `schema_migrations` records about one applied migration.
public struct AppliedMigration: Sendable, Equatable {
    public var id: String
    public var checksum: String
    /// Unix milliseconds.
    public var appliedAt: Int64
}

// The migrator both dialects share: bookkeeping, checks, order and reports. Each dialect applies one step its own way
// (SQLite: foreign keys off and checked after; PostgreSQL: under an advisory lock), with its own SQL files.
extension SQLConnection {
    /// Applies the `migrations` the database lacks, in id order, each through `applyStep`, telling `report` before
    /// and after. Checks everything first, so a changed or unknown migration stops the start before any change.
    /// `integerType`: the dialect's 64-bit integer, for `applied_at`. Returns the ids it applied.
    @discardableResult
    public func migrate(to migrations: [Migration], integerType: String, report: (@Sendable (MigrationProgress) -> Void)?,
                        applyStep: (Migration) throws -> Void) throws -> [String] {
        try execute("""
            CREATE TABLE IF NOT EXISTS schema_migrations (
                id         TEXT PRIMARY KEY,
                checksum   TEXT NOT NULL,
                applied_at \(integerType) NOT NULL
            )
            """)
        let pending = try Migration.pending(migrations, applied: try appliedMigrations().map { ($0.id, $0.checksum) })
        guard !pending.isEmpty else { return [] }
        let ids = pending.map(\.id)
        report?(.applying(ids))
        let started = ContinuousClock.now
        for migration in pending {
            try applyStep(migration)
        }
        report?(.applied(ids, seconds: (ContinuousClock.now - started).seconds))
        return ids
    }

    /// Records `migration` as applied now; inside the step's transaction, so it stays only if the step commits.
    public func recordApplied(_ migration: Migration) throws {
        try run("INSERT INTO schema_migrations (id, checksum, applied_at) VALUES ($1, $2, $3)",
                [.text(migration.id), .text(migration.checksum), .integer(Self.nowMilliseconds())])
    }

    /// The rows of `schema_migrations`, in id order.
    public func appliedMigrations() throws -> [AppliedMigration] {
        try query("SELECT id, checksum, applied_at FROM schema_migrations ORDER BY id", []).map { row in
            AppliedMigration(
                id: row.string("id") ?? "", checksum: row.string("checksum") ?? "", appliedAt: row.int("applied_at") ?? 0)
        }
    }

    /// Unix milliseconds, the unit of every time column in the schema.
    public static func nowMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }
}

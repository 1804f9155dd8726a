/// One numbered schema change, `NNN_description`, applied once and then immutable.
public struct Migration: Sendable, Equatable {
    /// The file name without `.sql`, e.g. `001_initial`; migrations run in `id` order.
    public let id: String
    /// A script of one or more statements. It runs inside a transaction, so it must not
    /// contain `BEGIN`/`COMMIT` itself.
    public let sql: String

    public init(id: String, sql: String) {
        self.id = id
        self.sql = sql
    }

    /// Lowercase hex SHA-256 of `sql`, recorded when applied so later edits are detected.
    public var checksum: String {
        SHA256.hexDigest(of: sql.utf8)
    }
}

/// The migrations built into this binary.
public enum Migrations {
    /// `Migrations/*.sql` as embedded at build time by the EmbedMigrations plugin, sorted by id.
    public static var embedded: [Migration] {
        EmbeddedMigrations.all
    }
}

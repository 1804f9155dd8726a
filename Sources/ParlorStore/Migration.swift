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

extension Migration {
    /// The `migrations` a database still lacks, in id order, given the (id, checksum) pairs it recorded. Refuses a
    /// duplicate id, a recorded migration this binary does not know (a newer binary ran) and one whose checksum
    /// changed (the file was edited after it ran), before anything is applied. Shared by every store's migrator.
    public static func pending(_ migrations: [Migration], applied: [(id: String, checksum: String)]) throws -> [Migration] {
        let known = try Dictionary(migrations.map { ($0.id, $0) }) { first, _ in
            throw MigrationError.duplicate(id: first.id)
        }
        let unknown = applied.map(\.id).filter { known[$0] == nil }
        guard unknown.isEmpty else { throw MigrationError.unknown(ids: unknown) }
        let recorded = Dictionary(applied.map { ($0.id, $0.checksum) }) { first, _ in first }
        var pending: [Migration] = []
        for migration in migrations.sorted(by: { $0.id < $1.id }) {
            if let checksum = recorded[migration.id] {
                guard checksum == migration.checksum else { throw MigrationError.changed(id: migration.id) }
            } else {
                pending.append(migration)
            }
        }
        return pending
    }
}

/// The migrations built into this binary.
public enum Migrations {
    /// `Migrations/*.sql` as embedded at build time by the EmbedMigrations plugin, sorted by id.
    public static var embedded: [Migration] {
        EmbeddedMigrations.all
    }
}

import Foundation
import ParlorStore

/// Parlor's PostgreSQL database: one writer connection for the rooms thread (behind a lock) and a small pool for
/// snapshot reads and short writes from any thread. Opening it connects every connection and applies the pending
/// migrations (once across nodes: PostgresConnection+Migrations.swift).
///
/// Bodies run synchronously on the caller's thread and must not keep the connection. A lost connection is
/// reconnected at the start of its next transaction, so the server rides out a PostgreSQL restart.
public final class PostgresDatabase: @unchecked Sendable {  // writer and isClosed under writerLock; pool locks itself
    public let url: PostgresURL
    private let writer: PostgresConnection
    private let pool: ConnectionPool<PostgresConnection>
    private let writerLock = NSLock()
    private var isClosed = false
    /// The migrations this open applied (none when another node or an earlier start had).
    public let appliedMigrations: [String]

    /// `poolSize`: connections beside the writer, at least 1. `reportMigrations` is told before pending migrations
    /// run and once they ran (not when none is pending, e.g. because another node applied them).
    public init(url: PostgresURL, poolSize: Int = 3, migrations: [Migration] = PostgresMigrations.embedded,
                appliesMigrations: Bool = true, reportMigrations: (@Sendable (MigrationProgress) -> Void)? = nil) throws {
        self.url = url
        writer = try PostgresConnection(url: url)
        appliedMigrations = appliesMigrations ? try writer.migrate(to: migrations, report: reportMigrations) : []
        pool = ConnectionPool(try (0..<max(1, poolSize)).map { _ in try PostgresConnection(url: url) },
                              closedError: { PostgresError.misuse("the database is closed") })
    }

    deinit {
        close()
    }

    /// Runs `body` in one READ COMMITTED transaction on the writer connection and commits; rolls back and
    /// rethrows if `body` or the commit throws. The rooms thread's batches: writes are serialized.
    public func write<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try writerLock.withLock {
            guard !isClosed else { throw PostgresError.misuse("the database is closed") }
            return try writer.inTransaction("BEGIN", body)
        }
    }

    /// Runs a read-only `body` on one snapshot (REPEATABLE READ) on a pool connection: any thread, beside writes.
    public func read<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try pool.withConnection { try $0.inTransaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", body) }
    }

    /// Runs `body` in a READ COMMITTED write transaction on a pool connection: short writes from any thread
    /// (users, shared secrets) that must not queue behind the rooms thread's batch.
    public func writeOnPool<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try pool.withConnection { try $0.inTransaction("BEGIN", body) }
    }

    /// Why the database cannot be used right now (unreachable, refusing connections), or nil when it answers.
    public func healthProblem() -> String? {
        do {
            _ = try read { try $0.queryOne("SELECT 1 AS ok") }
            return nil
        } catch let error as PostgresError {
            return "database unreachable: \(error.message)"
        } catch {
            return "database unreachable: \(error)"
        }
    }

    /// Waits for work in progress and closes every connection. Later calls throw; closing again does nothing.
    public func close() {
        writerLock.withLock {
            guard !isClosed else { return }
            isClosed = true
            pool.close()
            writer.close()
        }
    }
}

/// The PostgreSQL migrations built into this binary (`Migrations/postgres/*.sql`).
public enum PostgresMigrations {
    public static var embedded: [Migration] { EmbeddedMigrations.all }
}

extension PostgresDatabase: SQLDatabase {
    public func shortWrite<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try writeOnPool(body)
    }

    /// Lost connections, a server shutting down, a full disk, I/O errors.
    public static func isStorageFailure(_ error: any Error) -> Bool {
        (error as? PostgresError)?.isStorageFailure == true
    }
}

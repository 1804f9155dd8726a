import CSQLite
import Foundation

/// Parlor's SQLite database: one writer connection behind a lock and a small pool of
/// read-only connections. Opening it creates the file if needed and applies migrations.
///
/// Bodies passed to `write` and `read` run synchronously on the caller's thread and must not
/// keep the connection. The locks are not reentrant: a body must not call `write` or `close`,
/// and a `read` inside a `write` only works on a file database (it sees the last commit).
public final class Database: @unchecked Sendable {  // writer and isClosed under writerLock; readers checked out of their own locked pool
    public let path: String
    private let writer: SQLiteConnection
    /// `nil` for `:memory:`, where reads use the writer because another connection would see
    /// a different, empty database.
    private let readers: ConnectionPool<SQLiteConnection>?
    /// Internal for tests: whether it runs, and when it sleeps.
    let checkpointer: Checkpointer?
    private let writerLock = NSLock()
    private var isClosed = false
    let writeHealth = WriteHealth()

    /// Opens (creating if needed) and configures the database, then applies pending migrations.
    public init(_ configuration: DatabaseConfiguration) throws {
        let path = configuration.path
        // SQLite would open a private temporary database for "", which readers could not share.
        guard !path.isEmpty else { throw StoreError.misuse("the database path is empty") }
        let timeout = configuration.busyTimeoutMilliseconds
        if !configuration.isInMemory {
            try Self.createParentDirectory(of: path)
            try Self.restrictFileModes(of: path)
        }

        let writer = try SQLiteConnection.openWriter(path: path, busyTimeoutMilliseconds: timeout)
        if configuration.appliesMigrations {
            try writer.migrate(to: configuration.migrations, report: configuration.reportMigrations)
        }

        if configuration.isInMemory {
            readers = nil
            checkpointer = nil
        } else {
            try writer.execute("PRAGMA wal_autocheckpoint=0")
            // No journal_size_limit: a writer that starts the WAL over would cut the file back inside its commit; the
            // checkpointer truncates it once writes stop instead.
            let writerLock = self.writerLock
            checkpointer = try Checkpointer(path: path, interval: configuration.checkpointInterval,
                                            truncateAboveBytes: configuration.walTruncateBytes) { body in
                // The writer then waits on this lock rather than in SQLite's sleeping busy handler.
                writerLock.withLock(body)
            }
            // Opened only now: read-only connections cannot create the file or its schema.
            readers = ConnectionPool(
                try (0..<max(1, configuration.readerCount)).map { _ in
                    try SQLiteConnection.openReader(path: path, busyTimeoutMilliseconds: timeout)
                }, closedError: { StoreError.closed() })
        }
        self.path = path
        self.writer = writer
    }

    deinit {
        close()
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT` on the single writer connection and
    /// returns its result; rolls back and rethrows if `body` throws. Writes are serialized.
    public func write<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try writerLock.withLock {
            guard !isClosed else { throw StoreError.closed() }
            let result = try writer.recordingHealth(in: writeHealth) { try $0.inTransaction("BEGIN IMMEDIATE", body) }
            checkpointer?.noteCommit()
            return result
        }
    }

    /// Runs a read-only `body` in one transaction, so all its queries see the same snapshot.
    /// On a file it uses a reader connection, beside any write in progress (WAL); for
    /// `:memory:` it uses the writer under its lock, with writes refused for the duration.
    public func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        if let readers {
            return try readers.withConnection { reader in
                try reader.inTransaction("BEGIN", body)
            }
        }
        return try writerLock.withLock {
            guard !isClosed else { throw StoreError.closed() }
            try writer.execute("PRAGMA query_only=ON")
            defer { try? writer.execute("PRAGMA query_only=OFF") }
            return try writer.inTransaction("BEGIN", body)
        }
    }

    /// Waits for work in progress, finalizes all statements, folds the WAL back into the
    /// database file and closes every connection. Later calls throw; closing again does nothing.
    public func close() {
        // Before taking the writer's lock: the checkpointer may be waiting for it.
        checkpointer?.stop()
        writerLock.withLock {
            guard !isClosed else { return }
            isClosed = true
            readers?.close()
            if readers != nil {
                // TRUNCATE leaves an empty -wal file, so a copied database file is complete.
                try? writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            }
            writer.close()
        }
    }

    /// `mkdir -p` for the directory holding `path`, so `./data/parlor.db` works on a fresh checkout.
    private static func createParentDirectory(of path: String) throws {
        let parent = (path as NSString).deletingLastPathComponent
        guard !parent.isEmpty else { return }
        do {
            try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        } catch {
            throw StoreError(code: SQLITE_CANTOPEN, message: "cannot create directory \(parent): \(error)")
        }
    }
}

extension Database: SQLDatabase {
    /// SQLite has one writer: a short write queues with the rest.
    public func shortWrite<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try write(body)
    }

    public static func isStorageFailure(_ error: any Error) -> Bool {
        (error as? StoreError)?.isStorageFailure == true
    }
}

import CParlorSQLiteVFS
import CSQLite

// Opening and configuring the writer and the readers.
extension SQLiteConnection {
    /// SQLITE_OPEN_NOMUTEX: SQLite's per-connection mutex would only repeat what `Database`
    /// already guarantees — each connection is used by one thread at a time, under its locks.
    private static let threadingFlags = SQLITE_OPEN_NOMUTEX

    /// The single read-write connection. On a file it switches to WAL (persistent in the file),
    /// so readers see the last commit while a write is in progress. Its WAL writes go through the
    /// `parlor-wal-batch` VFS (one pwrite per commit, CParlorSQLiteVFS), or SQLite's default VFS if that
    /// could not be registered.
    static func openWriter(path: String, busyTimeoutMilliseconds: Int32) throws -> SQLiteConnection {
        let connection = try SQLiteConnection(
            path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | threadingFlags,
            busyTimeoutMilliseconds: busyTimeoutMilliseconds,
            vfs: parlor_wal_batch_register() == SQLITE_OK ? PARLOR_WAL_BATCH_VFS : nil)

        let journalMode = try connection.queryOne("PRAGMA journal_mode=WAL")?[0].stringValue?.lowercased()
        let expected = path == ":memory:" ? "memory" : "wal"
        guard journalMode == expected else {
            throw StoreError(
                code: SQLITE_ERROR,
                message: "cannot switch \(path) to WAL journal mode (SQLite kept \"\(journalMode ?? "?")\"); "
                    + "Parlor needs WAL so reads run beside writes — is the file on a network file system?")
        }
        // NORMAL is durable across application crashes in WAL mode; only a power loss can drop
        // the last commits, which is the usual trade for not syncing on every commit. A 4 MiB page cache (SQLite's
        // default is 2 MiB) holds the pages every batch touches, which otherwise come back by pread
        // (bench/HISTORY.md, 7979d9e).
        try connection.execute("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; PRAGMA cache_size=-4096")
        return connection
    }

    /// A read-only connection; open it after the writer has created and migrated the file.
    static func openReader(path: String, busyTimeoutMilliseconds: Int32) throws -> SQLiteConnection {
        let connection = try SQLiteConnection(
            path: path, flags: SQLITE_OPEN_READONLY | threadingFlags, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        // Belt and braces: query_only refuses every write statement, whatever the open flags.
        try connection.execute("PRAGMA foreign_keys=ON; PRAGMA query_only=ON")
        return connection
    }
}

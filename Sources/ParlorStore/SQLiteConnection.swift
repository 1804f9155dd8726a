import CParlorSQLiteVFS
import CSQLite

/// One SQLite connection. Not thread-safe by itself: `Database` hands it out under a lock,
/// and bodies must not keep it after they return.
public final class SQLiteConnection {
    /// `nil` once closed.
    private(set) var handle: OpaquePointer?
    /// Prepared statements by SQL text; see SQLiteConnection+Statements.swift.
    var statements: [String: OpaquePointer] = [:]
    /// The last few of them, searched first, and the slot the next one replaces.
    var recentStatements: [(sql: String, length: Int, statement: OpaquePointer)] = []
    var nextRecentSlot = 0
    /// The last failure of the storage itself (disk full, I/O error) since the owner reset it, even if the caller
    /// caught it: `Database` reports write health from it.
    var storageFailure: StoreError?

    /// Opens `path` with SQLite `flags` (`SQLITE_OPEN_*`).
    /// `vfs` nil is SQLite's default VFS.
    init(path: String, flags: Int32, busyTimeoutMilliseconds: Int32, vfs: String? = nil) throws {
        _ = parlor_page_cache_install()  // once per process, before SQLite initializes (page_cache.c)
        var handle: OpaquePointer?
        let result = sqlite3_open_v2(path, &handle, flags, vfs)
        guard result == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            throw StoreError(code: result, message: "cannot open \(path): \(message)")
        }
        self.handle = handle
        // Extended codes tell a UNIQUE violation from a FOREIGN KEY one.
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
    }

    deinit {
        close()
    }

    /// Runs a script of one or more statements without parameters (migrations, pragmas, BEGIN).
    public func execute(_ sql: String) throws {
        let handle = try openHandle(sql: sql)
        var errorMessage: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        guard result == SQLITE_OK else {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(errorMessage)
            throw noted(StoreError(code: sqlite3_extended_errcode(handle), message: message, sql: sql))
        }
    }

    /// The rowid of the most recent successful INSERT on this connection.
    public var lastInsertRowID: Int64 {
        handle.map { sqlite3_last_insert_rowid($0) } ?? 0
    }

    /// False while a transaction is open.
    var isAutocommit: Bool {
        handle.map { sqlite3_get_autocommit($0) != 0 } ?? true
    }

    /// Finalizes every cached statement and closes the connection. Idempotent.
    public func close() {
        guard let handle else { return }
        finalizeStatements()
        sqlite3_close_v2(handle)
        self.handle = nil
    }

    func openHandle(sql: String? = nil) throws -> OpaquePointer {
        guard let handle else { throw StoreError.closed(sql: sql) }
        return handle
    }

    /// The connection's current error, for a call that returned `result`.
    func error(_ result: Int32, sql: String?) -> StoreError {
        guard let handle else { return .closed(sql: sql) }
        // Prefer the extended code the connection recorded; fall back to the result itself.
        let extended = sqlite3_extended_errcode(handle)
        let code = extended & 0xFF == result & 0xFF ? extended : result
        return noted(StoreError(code: code, message: String(cString: sqlite3_errmsg(handle)), sql: sql))
    }

    private func noted(_ error: StoreError) -> StoreError {
        if error.isStorageFailure { storageFailure = error }
        return error
    }

    /// Rows changed by INSERT, UPDATE and DELETE since the connection opened.
    var totalChanges: Int64 {
        handle.map { Int64(sqlite3_total_changes64($0)) } ?? 0
    }

    /// True while a transaction is open; SQLite ends one by itself after some failures (e.g. SQLITE_FULL).
    public var isInTransaction: Bool { !isAutocommit }
}

extension SQLiteConnection: SQLConnection {}

// Each connection belongs to one caller at a time; the `Database` locks enforce that, not the type.
@available(*, unavailable)
extension SQLiteConnection: Sendable {}

import CSQLite

extension SQLiteConnection {
    /// Which of a connection's files `flushToDisk` syncs.
    enum SyncedFile {
        /// The database file.
        case database
        /// The write-ahead log (in WAL mode; the rollback journal otherwise).
        case journal
    }

    /// `fdatasync`s one of this connection's files through SQLite's own handle (and so its VFS), outside any
    /// transaction: a later sync SQLite makes of the same file then flushes only what was written since.
    func flushToDisk(_ file: SyncedFile) throws {
        let handle = try openHandle()
        var pointer: UnsafeMutablePointer<sqlite3_file>?
        let opcode = file == .database ? SQLITE_FCNTL_FILE_POINTER : SQLITE_FCNTL_JOURNAL_POINTER
        let found = sqlite3_file_control(handle, "main", opcode, &pointer)
        // No journal yet (nothing written) is nothing to flush.
        guard found == SQLITE_OK, let pointer, let methods = pointer.pointee.pMethods,
              let sync = methods.pointee.xSync else { return }
        let result = sync(pointer, SQLITE_SYNC_NORMAL)
        guard result == SQLITE_OK else {
            throw StoreError(code: result, message: "syncing the \(file == .database ? "database" : "WAL") file failed")
        }
    }
}

import Testing
@testable import ParlorStore

/// `flushToDisk` syncs a connection's files through SQLite's own handles: the checkpointer uses it to flush what a
/// RESTART would otherwise sync with the writer held.
@Suite struct SQLiteConnectionSyncTests {
    private func withWriter(_ body: (SQLiteConnection) throws -> Void) throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/parlor.db"
            let connection = try SQLiteConnection.openWriter(path: path, busyTimeoutMilliseconds: 100)
            defer { connection.close() }
            try body(connection)
        }
    }

    @Test func bothFilesOfAWALDatabaseAreSynced() throws {
        try withWriter { connection in
            try connection.execute("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)")
            try connection.flushToDisk(.database)
            try connection.flushToDisk(.journal)
            #expect(try connection.queryInteger("SELECT count(*) FROM t") == 1)
        }
    }

    @Test func aClosedConnectionSyncsNothing() throws {
        try withWriter { connection in
            connection.close()
            #expect(throws: StoreError.self) { try connection.flushToDisk(.database) }
            #expect(throws: StoreError.self) { try connection.flushToDisk(.journal) }
        }
    }
}

import CParlorSQLiteVFS
import CSQLite
import Testing
import ParlorStore

/// SQLite's page cache, wrapped (page_cache.c): the truncation at the end of a transaction is skipped when no page
/// could be beyond the database's size, and passed on when one may be.
@Suite struct PageCacheTests {
    /// Truncations this thread's connections skipped and passed on so far (the writer runs on the calling thread).
    private static func counts() -> (skipped: Int64, passed: Int64) {
        var skipped: Int64 = 0, passed: Int64 = 0
        parlor_page_cache_counts(&skipped, &passed)
        return (skipped, passed)
    }

    private static func withQuietDatabase<T>(_ body: (Database) throws -> T) throws -> T {
        try withTemporaryDirectory { directory in
            var configuration = DatabaseConfiguration(path: "\(directory)/parlor.db", migrations: [])
            configuration.checkpointInterval = 3600
            let database = try Database(configuration)
            defer { database.close() }
            try database.write {
                try $0.execute("CREATE TABLE log (room INTEGER, seq INTEGER, body TEXT, PRIMARY KEY (room, seq)) "
                    + "WITHOUT ROWID")
            }
            return try body(database)
        }
    }

    /// One row at the end of each of `rooms` key ranges per commit, as the rooms thread appends events: the leaves
    /// that fill up are in the middle of the B-tree, so SQLite balances them with their siblings and, to keep
    /// their page numbers in order, parks a page at its temporary key.
    private static func append(_ database: Database, rooms: Int, commits: Range<Int>) throws {
        let body = String(repeating: "e", count: 180)
        for seq in commits {
            try database.write { db in
                for room in 0..<rooms {
                    try db.run("INSERT INTO log (room, seq, body) VALUES (?, ?, ?)",
                               [.integer(Int64(room)), .integer(Int64(seq)), .text(body)])
                }
            }
        }
    }

    @Test func isInstalledBeforeSQLiteInitializes() {
        // The first connection of the process installed it; a second call reports the same result.
        #expect(parlor_page_cache_install() == SQLITE_OK)
    }

    @Test func commitsThatAddNoPageBeyondTheDatabaseSkipTheirTruncation() throws {
        try Self.withQuietDatabase { database in
            let before = Self.counts()
            try Self.append(database, rooms: 50, commits: 0..<120)
            let after = Self.counts()
            let skipped = after.skipped - before.skipped, passed = after.passed - before.passed
            // Without the wrapper every commit after the first parked page passes its truncation on to pcache1,
            // which then scans its whole hash table.
            #expect(skipped >= 100, "skipped \(skipped), passed \(passed) of 120 commits' truncations")
            #expect(try database.read { try $0.queryOne("PRAGMA integrity_check")?[0].stringValue } == "ok")
            #expect(try database.read { try $0.queryInteger("SELECT count(*) FROM log") } == 50 * 120)
        }
    }

    @Test func aRolledBackTransactionStillDropsThePagesItAdded() throws {
        try Self.withQuietDatabase { database in
            try Self.append(database, rooms: 20, commits: 0..<20)
            let pagesBefore = try database.read { try $0.queryInteger("PRAGMA page_count") }
            let before = Self.counts()
            // Grows the file by some 200 pages, then fails: the pager shrinks back and must drop those pages.
            #expect(throws: ExpectedFailure.self) {
                try database.write { db in
                    try db.run("INSERT INTO log (room, seq, body) VALUES (99, 0, ?)",
                               [.text(String(repeating: "x", count: 800_000))])
                    throw ExpectedFailure()
                }
            }
            #expect(Self.counts().passed > before.passed, "the rollback's truncation was skipped")
            // The same pages are allocated again with other content; a stale cached page would show here.
            _ = try database.write { db in
                try db.run("INSERT INTO log (room, seq, body) VALUES (98, 0, ?)",
                           [.text(String(repeating: "y", count: 800_000))])
            }
            // Checked on the writer, whose cache held the dropped pages (a reader has a cache of its own).
            let (pages, integrity, rolledBack, written) = try database.write { db in
                (try db.queryInteger("PRAGMA page_count"), try db.queryOne("PRAGMA integrity_check")?[0].stringValue,
                 try db.queryInteger("SELECT count(*) FROM log WHERE room = 99"),
                 try db.queryInteger("SELECT length(body) FROM log WHERE room = 98"))
            }
            #expect(pages ?? 0 > pagesBefore ?? 0)
            #expect(integrity == "ok")
            #expect(rolledBack == 0)
            #expect(written == 800_000)
        }
    }
}

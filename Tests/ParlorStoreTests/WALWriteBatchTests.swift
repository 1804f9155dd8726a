import CParlorSQLiteVFS
import Foundation
import Testing
import ParlorStore

/// The writer's WAL writes go through the `parlor-wal-batch` VFS: a commit's frames in one write, and in the file
/// by the time the commit returns.
@Suite struct WALWriteBatchTests {
    private static func counts() -> (flushes: Int64, writes: Int64) {
        var flushes: Int64 = 0, writes: Int64 = 0
        parlor_wal_batch_counts(&flushes, &writes)
        return (flushes, writes)
    }

    /// A database whose checkpointer stays out of the way (its first pass is an interval after open): the WAL keeps
    /// every frame the test writes and is never started over, which would add a write and sync of its header.
    private static func withQuietDatabase<T>(_ body: (Database, String) throws -> T) throws -> T {
        try withTemporaryDirectory { directory in
            var configuration = DatabaseConfiguration(path: "\(directory)/parlor.db")
            configuration.checkpointInterval = 3600
            let database = try Database(configuration)
            defer { database.close() }
            return try body(database, directory)
        }
    }

    @Test func aCommitOfManyPagesIsOneWrite() throws {
        try Self.withQuietDatabase { database, _ in
            let filler = String(repeating: "p", count: 1500)
            let before = Self.counts()
            for batch in 0..<20 {
                // Ten rows of 1.5 KB: several table and index pages per commit.
                try database.write { db in
                    for index in 0..<10 { try db.insertUser("USR-\(batch)-\(index)", name: "\(batch)-\(index)-\(filler)") }
                }
            }
            let after = Self.counts()
            let writes = after.writes - before.writes, flushes = after.flushes - before.flushes
            #expect(writes >= 20 * 2 * 4, "SQLite wrote \(writes) times to the WAL")
            #expect(flushes == 20, "\(writes) WAL writes reached the file in \(flushes) writes, not one per commit")
        }
    }

    /// Copies the database and its WAL (no -shm, so the copy is recovered from the WAL's frames and checksums alone)
    /// right after each commit returns: every commit must already be whole in the file.
    @Test func everyCommitIsInTheFileWhenItReturns() throws {
        try Self.withQuietDatabase { database, directory in
            let filler = String(repeating: "c", count: 900)
            for commit in 1...12 {
                try database.write { db in
                    for index in 0..<(commit % 3 == 0 ? 1 : 6) {
                        try db.insertUser("USR-\(commit)-\(index)", name: "\(commit)-\(index)-\(filler)")
                    }
                }
                let copy = "\(directory)/copy-\(commit)"
                try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
                for suffix in ["", "-wal"] {
                    try FileManager.default.copyItem(atPath: "\(directory)/parlor.db\(suffix)", toPath: "\(copy)/parlor.db\(suffix)")
                }
                var configuration = DatabaseConfiguration(path: "\(copy)/parlor.db")
                configuration.appliesMigrations = false
                let recovered = try Database(configuration)
                let expected = try database.read { try $0.count("users") }
                #expect(try recovered.read { try $0.count("users") } == expected, "commit \(commit) is not whole in the WAL file")
                recovered.close()
            }
        }
    }
}

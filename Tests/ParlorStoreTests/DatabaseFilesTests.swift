import Foundation
import Testing
import ParlorStore

/// What the database leaves on disk: who may read it, and how large its WAL may grow.
@Suite struct DatabaseFilesTests {
    private func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test func newDatabaseAndItsWALAreOwnerOnly() throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/parlor.db"
            let database = try Database(DatabaseConfiguration(path: path))
            defer { database.close() }
            try database.write { try $0.insertUser("USR-1") }
            for file in [path, path + "-wal", path + "-shm"] {
                let found = try mode(file)
                #expect(found == 0o600, "\(file) is \(String(found, radix: 8))")
            }
        }
    }

    @Test func existingWorldReadableDatabaseIsNarrowedOnOpen() throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/parlor.db"
            try Database(DatabaseConfiguration(path: path)).close()
            // As an older version left it: 0644, with a -wal file of the same mode lying beside it.
            _ = FileManager.default.createFile(atPath: path + "-wal", contents: nil)
            for file in [path, path + "-wal"] { chmod(file, 0o644) }
            let database = try Database(DatabaseConfiguration(path: path))
            defer { database.close() }
            for file in [path, path + "-wal", path + "-shm"] {
                let found = try mode(file)
                #expect(found == 0o600, "\(file) is \(String(found, radix: 8))")
            }
        }
    }

    /// A database whose checkpointer starts the WAL over beyond 64 KiB of frames, every `checkpointInterval` seconds.
    private func withSmallWAL(checkpointInterval: Double, _ body: (Database, _ walPath: String) throws -> Void) throws {
        try withTemporaryDirectory { directory in
            var configuration = DatabaseConfiguration(path: "\(directory)/parlor.db")
            configuration.walTruncateBytes = 64 * 1024
            configuration.checkpointInterval = checkpointInterval
            let database = try Database(configuration)
            defer { database.close() }
            try body(database, configuration.path + "-wal")
        }
    }

    @Test func walIsTruncatedAfterABurstWithoutAShutdown() throws {
        try withSmallWAL(checkpointInterval: 0.05) { database, walPath in
            func walSize() -> Int { ((try? FileManager.default.attributesOfItem(atPath: walPath))?[.size] as? NSNumber)?.intValue ?? 0 }
            // About 4 MB of pages in many small transactions, as the rooms thread writes them.
            let filler = String(repeating: "x", count: 2000)
            var largest = 0
            for batch in 0..<200 {
                try database.write { db in
                    for index in 0..<10 { try db.insertUser("USR-\(batch)-\(index)", name: "\(batch)-\(index)-\(filler)") }
                }
                largest = max(largest, walSize())
            }
            #expect(largest > 256 * 1024, "the burst should have grown the WAL (largest \(largest))")
            // The checkpointer cuts it back while the database stays open.
            let deadline = Date().addingTimeInterval(5)
            while walSize() > 128 * 1024, Date() < deadline { usleep(20_000) }
            #expect(walSize() <= 128 * 1024, "WAL still \(walSize()) bytes")
            #expect(try database.read { try $0.count("users") } == 2000)
        }
    }

    /// Under writes that never pause the checkpointer starts the WAL over (RESTART: a new salt in its header) and
    /// the next writes reuse the file from its start, rather than cutting it off with the writer held.
    @Test func walStartsOverWithoutBeingCutOffWhileWritesGoOn() throws {
        try withSmallWAL(checkpointInterval: 0.01) { database, walPath in
            func walHeader() -> (size: Int, salt: [UInt8]) {
                guard let handle = FileHandle(forReadingAtPath: walPath) else { return (0, []) }
                defer { try? handle.close() }
                let size = Int((try? handle.seekToEnd()) ?? 0)
                try? handle.seek(toOffset: 16)
                return (size, [UInt8]((try? handle.read(upToCount: 8)) ?? Data()))
            }
            let filler = String(repeating: "x", count: 1500)
            var salts: [[UInt8]] = []
            var sizeAfterFirstRestart: Int?
            var smallestSince = Int.max
            // A gap longer than the checkpoint interval between two commits is an idle pass, where cutting the file
            // off is right: from such a gap on (a starved test process, under make tsan), writes did not go on.
            var starvedAtCommit: Int?
            var previousCommit = Date()
            let deadline = Date().addingTimeInterval(20)
            var index = 0
            while salts.count < 4, Date() < deadline {
                try database.write { db in try db.insertUser("USR-\(index)", name: "\(index)-\(filler)") }
                index += 1
                let now = Date()
                if now.timeIntervalSince(previousCommit) > 0.01, starvedAtCommit == nil { starvedAtCommit = index }
                previousCommit = now
                let header = walHeader()
                if header.salt.count == 8, header.salt != salts.last {
                    salts.append(header.salt)
                    if salts.count == 2 { sizeAfterFirstRestart = header.size }
                }
                if sizeAfterFirstRestart != nil, starvedAtCommit == nil { smallestSince = min(smallestSince, header.size) }
            }
            #expect(salts.count == 4, "the WAL started over \(salts.count - 1) times in \(index) commits")
            let reused = try #require(sizeAfterFirstRestart)
            #expect(reused > 64 * 1024, "the file kept its size when the WAL started over")
            #expect(smallestSince >= reused, "the file was cut back to \(smallestSince) bytes while writes went on (first gap at commit \(starvedAtCommit.map(String.init) ?? "none") of \(index))")
        }
    }
}

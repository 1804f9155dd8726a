import Foundation
import Testing
import ParlorStore

@Suite struct DatabaseTests {
    @Test func fileDatabaseUsesWAL() throws {
        try withDatabase(.file) { database in
            let mode = try database.read { try $0.queryOne("PRAGMA journal_mode")?[0] }
            #expect(mode == .text("wal"))
            #expect(FileManager.default.fileExists(atPath: database.path + "-wal"))
        }
    }

    @Test func createsMissingParentDirectories() throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/data/nested/parlor.db"
            try Database(DatabaseConfiguration(path: path)).close()
            #expect(FileManager.default.fileExists(atPath: path))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func writeRollsBackWhenBodyThrows(kind: StoreKind) throws {
        try withDatabase(kind) { database in
            #expect(throws: ExpectedFailure.self) {
                try database.write { connection in
                    try connection.insertUser("USR-1")
                    throw ExpectedFailure()
                }
            }
            #expect(try database.read { try $0.count("users") } == 0)
            // The writer is usable again: no transaction was left open.
            try database.write { try $0.insertUser("USR-2") }
            #expect(try database.read { try $0.count("users") } == 1)
        }
    }

    @Test func writeReturnsTheBodyResult() throws {
        try withDatabase(.memory) { database in
            let changes = try database.write { connection in
                try connection.insertUser("USR-1")
                return try connection.run("UPDATE users SET tokens_valid_after = 5")
            }
            #expect(changes == 1)
        }
    }

    @Test func readSeesCommittedWritesOnAnotherConnection() throws {
        try withDatabase(.file) { database in
            let writer = try database.write { connection in
                try connection.insertUser("USR-1", name: "ada")
                return ObjectIdentifier(connection)
            }
            let (reader, name) = try database.read { connection in
                (ObjectIdentifier(connection), try connection.queryOne("SELECT name FROM users")?.string("name"))
            }
            #expect(reader != writer)
            #expect(name == "ada")
        }
    }

    @Test func readsRunBesideAnOpenWriteAndSeeTheLastCommit() throws {
        try withDatabase(.file) { database in
            let countDuringWrite = try database.write { connection in
                try connection.insertUser("USR-1")
                // A reader neither waits for this transaction nor sees its uncommitted row.
                return try database.read { try $0.count("users") }
            }
            #expect(countDuringWrite == 0)
            #expect(try database.read { try $0.count("users") } == 1)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func readIsReadOnly(kind: StoreKind) throws {
        try withDatabase(kind) { database in
            #expect(throws: StoreError.self) {
                try database.read { try $0.insertUser("USR-1") }
            }
            // On :memory: the writer is lent to reads; writes must work again afterwards.
            try database.write { try $0.insertUser("USR-2") }
            #expect(try database.read { try $0.count("users") } == 1)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func foreignKeysAreEnforced(kind: StoreKind) throws {
        try withDatabase(kind) { database throws in
            let error = #expect(throws: StoreError.self) {
                try database.write { connection in
                    try connection.insertUser("USR-1")
                    try connection.run(
                        "INSERT INTO members (id, room_id, user_id, state, joined_at) VALUES (?, ?, ?, 'JOINED', 0)",
                        ["MEM-1", "RM-missing", "USR-1"])
                }
            }
            #expect(error?.isConstraintViolation == true)
            #expect(error?.isForeignKeyViolation == true)
            #expect(try database.read { try $0.count("users") } == 0, "the whole write rolled back")
        }
    }

    @Test func uniqueViolationsAreRecognizable() throws {
        try withDatabase(.memory) { database in
            try database.write { try $0.insertUser("USR-1", name: "ada") }
            let error = #expect(throws: StoreError.self) {
                try database.write { try $0.insertUser("USR-2", name: "ada") }
            }
            #expect(error?.isUniqueViolation == true)
            #expect(error?.isForeignKeyViolation == false)
            #expect(error?.sql?.hasPrefix("INSERT INTO users") == true)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func concurrentWritesAllLand(kind: StoreKind) throws {
        let threads = 8
        let rowsPerThread = 100
        try withDatabase(kind) { database throws in
            let failures = FailureLog()
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                for row in 0..<rowsPerThread {
                    do {
                        try database.write { try $0.insertUser("USR-\(thread)-\(row)") }
                        // Reads interleave with the writes, on readers or the shared writer.
                        _ = try database.read { try $0.count("users") }
                    } catch {
                        failures.record(error)
                    }
                }
            }
            #expect(failures.errors.isEmpty, "\(failures.errors.count) failed, first: \(String(describing: failures.errors.first))")
            #expect(try database.read { try $0.count("users") } == Int64(threads * rowsPerThread))
        }
    }

    @Test func readersWaitWhenAllAreBusy() throws {
        try withTemporaryDirectory { directory in
            let database = try Database(DatabaseConfiguration(path: "\(directory)/parlor.db", readerCount: 1))
            defer { database.close() }
            let failures = FailureLog()
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                for _ in 0..<50 {
                    do { _ = try database.read { try $0.count("users") } } catch { failures.record(error) }
                }
            }
            #expect(failures.errors.isEmpty, "\(failures.errors.count) failed, first: \(String(describing: failures.errors.first))")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func closeIsIdempotentAndLaterCallsThrow(kind: StoreKind) throws {
        try withDatabasePath(kind) { path in
            let database = try Database(DatabaseConfiguration(path: path))
            database.close()
            database.close()
            #expect(throws: StoreError.self) { try database.write { try $0.insertUser("USR-1") } }
            #expect(throws: StoreError.self) { try database.read { try $0.count("users") } }
        }
    }

    @Test func closeCheckpointsTheWAL() throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/parlor.db"
            let database = try Database(DatabaseConfiguration(path: path))
            try database.write { try $0.insertUser("USR-1") }
            database.close()
            let walSize = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
            #expect(walSize == 0)
        }
    }
}

/// Collects errors thrown on concurrentPerform's threads.
final class FailureLog: @unchecked Sendable {  // @unchecked: `lock` guards `stored`
    private let lock = NSLock()
    private var stored: [any Error] = []

    func record(_ error: any Error) { lock.withLock { stored.append(error) } }
    var errors: [any Error] { lock.withLock { stored } }
}

@Suite struct CheckpointTests {
    /// The background checkpointer copies committed pages into the database file while the database stays open,
    /// so the writer's own commits never have to (its automatic checkpoint is off).
    @Test func walIsCheckpointedInTheBackground() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/checkpoint.db"
            let database = try Database(DatabaseConfiguration(path: path))
            defer { database.close() }
            let before = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            try database.write { db in
                for index in 0..<2000 {
                    try db.run("INSERT INTO users (id, name, created_at) VALUES (?, ?, 0)", [.text("USR-\(index)"), .text(String(repeating: "n", count: 200) + "\(index)")])
                }
            }
            var grown = false
            for _ in 0..<300 where !grown {  // bounded: the checkpointer runs every second
                grown = ((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) > before + 100_000
                if !grown { usleep(10_000) }
            }
            #expect(grown, "the database file did not receive the WAL's pages")
        }
    }
}

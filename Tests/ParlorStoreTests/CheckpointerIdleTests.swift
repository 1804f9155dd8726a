import Foundation
import Synchronization
import Testing
@testable import ParlorStore

/// The checkpointer sleeps once a pass finds nothing to copy and no commit came since, and the next commit wakes it:
/// a database nobody writes to costs no wake-ups, and what is written later is still copied.
@Suite struct CheckpointerIdleTests {
    private func wait(for condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while !condition() {
            if Date() > deadline { return false }
            usleep(2_000)
        }
        return true
    }

    @Test func anIdleDatabaseSleepsUntilTheNextCommit() throws {
        try withTemporaryDirectory { directory in
            var configuration = DatabaseConfiguration(path: "\(directory)/parlor.db")
            configuration.checkpointInterval = 0.01
            let database = try Database(configuration)
            defer { database.close() }
            let checkpointer = try #require(database.checkpointer)
            try database.write { try $0.insertUser("USR-1") }
            #expect(wait { checkpointer.isSleepingUntilCommit }, "no sleep after the writes stopped")

            // Asleep, it runs no pass, however many intervals go by.
            let asleepAt = checkpointer.passes.load(ordering: .relaxed)
            usleep(200_000)  // twenty intervals
            #expect(checkpointer.passes.load(ordering: .relaxed) == asleepAt, "passes ran with nothing written")
            #expect(checkpointer.isSleepingUntilCommit)

            // A commit wakes it; its passes copy the commit and it sleeps again.
            try database.write { try $0.insertUser("USR-2") }
            #expect(wait { checkpointer.passes.load(ordering: .relaxed) > asleepAt + 1 }, "the commit did not wake the checkpointer")
            #expect(wait { checkpointer.isSleepingUntilCommit }, "no sleep after the second write")
            // The database file alone (no WAL beside it) has both rows: the second commit was copied before the sleep.
            try FileManager.default.createDirectory(atPath: "\(directory)/copy", withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: "\(directory)/parlor.db", toPath: "\(directory)/copy/parlor.db")
            var copyConfiguration = DatabaseConfiguration(path: "\(directory)/copy/parlor.db")
            copyConfiguration.appliesMigrations = false
            let copy = try Database(copyConfiguration)
            defer { copy.close() }
            #expect(try copy.read { try $0.count("users") } == 2)
        }
    }
}

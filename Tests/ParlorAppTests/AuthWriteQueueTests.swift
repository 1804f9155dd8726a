import Foundation
import Testing
import ParlorLoop
import ParlorRooms
import ParlorRoomsSQLite
import ParlorStore
@testable import ParlorApp

/// Logins that wait for the write thread share transactions of at most `maxBatch`, and each gets its own answer.
@Suite struct AuthWriteQueueTests {
    @Test func loginsQueuedBehindABusyWriterShareTwoTransactions() throws {
        let database = try Database(DatabaseConfiguration(path: ":memory:"))
        let executor = DatabaseExecutor(readerCount: 1)
        defer {
            executor.stop()
            database.close()
        }
        let users = UserDirectory(database: database)
        let queue = AuthWriteQueue()
        // Hold the write thread so every login below is queued before the first drain runs.
        let writerHeld = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        executor.write {
            writerHeld.signal()
            release.wait()
        }
        writerHeld.wait()
        let count = AuthWriteQueue.maxBatch + 36
        let answers = Locked<[Int: Result<UserDirectory.Grant, any Error>]>([:])
        let allAnswered = DispatchSemaphore(value: 0)
        for index in 0..<count {
            let entry = AuthWriteQueue.Entry(request: .init(name: "user\(index)", claim: nil)) { result in
                let done = answers.withLock { answers in
                    answers[index] = result
                    return answers.count == count
                }
                if done { allAnswered.signal() }
            }
            queue.submit(entry, executor: executor, users: users, isLive: { _ in false })
        }
        #expect(queue.queued == count && queue.batchCount == 0)
        release.signal()
        allAnswered.wait()
        #expect(queue.batchCount == 2, "64 and then 36 logins, each batch one transaction")
        #expect(queue.queued == 0)
        let names = try answers.withLock { answers in try (0..<count).map { try answers[$0]!.get().user.name } }
        #expect(names == (0..<count).map { "user\($0)" })
    }
}

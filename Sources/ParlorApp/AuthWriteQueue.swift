import ParlorLoop
import ParlorRooms
import ParlorStore

/// POST /auth's user-row writes, gathered so that the requests waiting for the write thread share one transaction
/// and one commit (group commit): under a burst of logins the commit, its file locks and its WAL write were a large
/// part of each request. A request waits for no one: the first of a burst queues a drain job at once, and what
/// arrives while that job waits or runs goes into the next one. Each request's answer goes out after its commit.
final class AuthWriteQueue: Sendable {
    /// At most this many requests share a transaction, so one commit's answers do not wait on a long batch.
    static let maxBatch = 64

    struct Entry: Sendable {
        let request: UserDirectory.AuthRequest
        let done: @Sendable (Result<UserDirectory.Grant, any Error>) -> Void
    }

    private let pending = Locked<[Entry]>([])
    /// Transactions run so far (tests).
    private let drains = Locked<Int>(0)

    /// Queues the request; `done` runs on the write thread once its transaction committed or failed.
    func submit(_ entry: Entry, executor: DatabaseExecutor, users: UserDirectory,
                isLive: @escaping @Sendable (String) -> Bool) {
        let first = pending.withLock { queue in
            queue.append(entry)
            return queue.count == 1
        }
        // Only the request that found the queue empty queues a drain; the others are in that drain or the next.
        if first { executor.write { self.drain(executor: executor, users: users, isLive: isLive) } }
    }

    private func drain(executor: DatabaseExecutor, users: UserDirectory, isLive: @escaping @Sendable (String) -> Bool) {
        let (batch, more) = pending.withLock { queue -> ([Entry], Bool) in
            let batch = Array(queue.prefix(Self.maxBatch))
            queue.removeFirst(batch.count)
            return (batch, !queue.isEmpty)
        }
        // What is left over (more than a batch) is queued now: a request that arrives meanwhile finds the queue
        // non-empty and counts on that drain.
        if more { executor.write { self.drain(executor: executor, users: users, isLive: isLive) } }
        drains.withLock { $0 += 1 }
        let results = users.authenticate(batch.map(\.request), isLive: isLive)
        for (entry, result) in zip(batch, results) { entry.done(result) }
    }

    /// Requests queued and not yet taken by a drain (tests).
    var queued: Int { pending.withLock { $0.count } }

    /// Transactions (batches) run so far (tests).
    var batchCount: Int { drains.withLock { $0 } }
}

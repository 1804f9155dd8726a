/// Where blocking database work runs, so that no event loop ever waits on SQLite: reads on one thread per reader
/// connection, writes on a thread of their own. A read never queues behind a write (the writer's lock may be held
/// by the rooms thread's batch), and a read waits for a reader connection only when one is held outside the pool.
public final class DatabaseExecutor: Sendable {
    private let reads: BlockingWorkPool
    private let writes: BlockingWorkPool

    /// `readerCount`: the database's reader connections (`--readers`), one read thread each.
    public init(readerCount: Int) {
        reads = BlockingWorkPool(name: "parlor-dbread", threadCount: readerCount)
        writes = BlockingWorkPool(name: "parlor-dbwrite", threadCount: 1)
    }

    /// Runs `job`, which reads (`Database.read`), on a read thread.
    public func read(_ job: @escaping BlockingWorkPool.Job) { reads.submit(job) }

    /// Runs `job`, which writes (`Database.write`), on the write thread, after the writes queued before it.
    public func write(_ job: @escaping BlockingWorkPool.Job) { writes.submit(job) }

    /// Finishes the queued jobs and ends the threads; call it before closing the database. Idempotent.
    public func stop() {
        reads.stop()
        writes.stop()
    }
}

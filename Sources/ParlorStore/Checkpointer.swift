import Foundation
import Synchronization

/// Moves WAL pages into the database file on its own thread and connection, so the fsyncs of a checkpoint never
/// run inside a commit on the writer's thread (SQLite's automatic checkpoint would: with a busy disk that stalls
/// every room for hundreds of milliseconds). The writer's automatic checkpoint is turned off when this runs.
///
/// The WAL only starts over when a write begins with all of it copied, which steady writes never allow (each
/// PASSIVE pass ends behind the commits made meanwhile), so under load it grew without bound (1.8 GB in 30 s of
/// churn). Once its frames are over `truncateAboveBytes`, the rest is copied with writes held off and the WAL
/// starts over (RESTART): rounds of copying and syncing just before (`prepareRestart`) leave it the last few pages,
/// so the writer waits for little more than two short `fdatasync`s. Not TRUNCATE under load: cutting the file off
/// is an `ftruncate` with the writer held, which on ext4 took as long again as the copy (held 35 ms on average
/// instead of 9: bench/HISTORY.md, 51364f5), and the next writes then allocate the blocks again; the next write
/// reuses the file from its start instead. The file is truncated when writes have stopped (no new frame and no
/// commit since the pass before), with nothing left to copy. Its size under load is bounded by what is written in
/// about one pass interval.
///
/// Once a pass finds nothing new with everything copied and no commit since it began, the thread sleeps until the
/// next commit (`noteCommit`) instead of waking every interval: a server with nothing to write wakes for nothing.
final class Checkpointer: @unchecked Sendable {  // `stopped` and `sleepingUntilCommit` are guarded by `condition`
    private let connection: SQLiteConnection
    private let pageSize: Int64
    private let walPath: String
    private let interval: TimeInterval
    private let truncateAboveBytes: Int
    /// Runs its argument between two writes, holding the writer off meanwhile.
    private let withWriterHeld: @Sendable (() -> Void) -> Void
    private let condition = NSCondition()
    private var stopped = false
    /// Set by every commit, cleared as each pass begins; the writer takes `condition` only to wake a sleeping pass.
    private let committedSincePass = Atomic<Bool>(true)
    private var sleepingUntilCommit = false
    /// Passes run so far (tests).
    let passes = Atomic<Int>(0)

    /// Whether the thread sleeps until the next commit (tests).
    var isSleepingUntilCommit: Bool {
        condition.lock()
        defer { condition.unlock() }
        return sleepingUntilCommit
    }
    private let finished = DispatchSemaphore(value: 0)

    /// A TRUNCATE checkpoint waits for readers on old snapshots in SQLite's busy handler; it gives up after this
    /// (having copied what it could) and tries again at the next pass rather than hold the writer off longer.
    static let busyTimeoutMilliseconds: Int32 = 100
    /// 15 bytes at most: the kernel keeps no more of a thread's name.
    static let threadName = "parlor-checkpt"

    init(path: String, interval: TimeInterval = 1, truncateAboveBytes: Int,
         withWriterHeld: @escaping @Sendable (() -> Void) -> Void) throws {
        connection = try SQLiteConnection.openWriter(path: path, busyTimeoutMilliseconds: Self.busyTimeoutMilliseconds)
        pageSize = try connection.queryInteger("PRAGMA page_size") ?? 4096
        walPath = path + "-wal"
        self.interval = interval
        self.truncateAboveBytes = truncateAboveBytes
        self.withWriterHeld = withWriterHeld
        Thread.named(Self.threadName) { [self] in self.run() }.start()
    }

    private func run() {
        var frames: (log: Int64, checkpointed: Int64)?
        condition.lock()
        // The first pass waits one interval too: nothing at open needs it sooner, and a WAL copied in full makes
        // the next write start it over (one more write and sync of its header), which should not race the first
        // writes at an unknown moment.
        if !stopped { _ = condition.wait(until: Date().addingTimeInterval(interval)) }
        while !stopped {
            condition.unlock()
            let committedSincePrevious = committedSincePass.exchange(false, ordering: .sequentiallyConsistent)
            let previous = frames
            frames = passive()
            passes.add(1, ordering: .relaxed)
            var idle = false
            if let current = frames {
                // Idle needs no commit since the previous pass began, not only the same frame count: after a RESTART
                // the count stays as it was until the next commit starts the log over, so a writer that is merely
                // late (descheduled) would look idle and get its WAL cut off.
                idle = !committedSincePrevious && current.log == previous?.log && current.checkpointed == current.log
                if idle, walSize() > truncateAboveBytes {
                    // Nothing to copy: only the file is cut off, with no writer waiting. A commit that was under way
                    // during the pass (one slow in its header's fdatasync, say) ends before the writer is held here,
                    // and then writes go on after all.
                    withWriterHeld {
                        guard !self.committedSincePass.load(ordering: .sequentiallyConsistent) else { return }
                        try? self.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                    }
                } else if !idle, current.log * pageSize > truncateAboveBytes {
                    prepareRestart(after: current)
                    withWriterHeld { try? self.connection.execute("PRAGMA wal_checkpoint(RESTART)") }
                }
            }
            condition.lock()
            if idle {
                // Checked under the lock after saying so: a commit either sees `sleepingUntilCommit` and signals, or
                // came before and is seen here.
                sleepingUntilCommit = true
                while !stopped, !committedSincePass.load(ordering: .sequentiallyConsistent) { condition.wait() }
                sleepingUntilCommit = false
            }
            // After a wake-up too: the commits that ended the sleep are copied an interval later, as under load.
            if !stopped { _ = condition.wait(until: Date().addingTimeInterval(interval)) }
        }
        condition.unlock()
        connection.close()
        finished.signal()
    }

    /// Called after every commit of the writer: wakes a pass sleeping for want of writes. An atomic exchange, and
    /// the lock only for the first commit after a pass.
    func noteCommit() {
        guard !committedSincePass.exchange(true, ordering: .sequentiallyConsistent) else { return }
        condition.lock()
        if sleepingUntilCommit { condition.signal() }
        condition.unlock()
    }

    /// PASSIVE: copies what no reader still needs, never waits for or blocks the writer. Returns the WAL's frames
    /// and how many of them are now in the database file.
    private func passive() -> (log: Int64, checkpointed: Int64)? {
        guard let row = try? connection.queryOne("PRAGMA wal_checkpoint(PASSIVE)") else { return nil }
        return (row[1].intValue ?? 0, row[2].intValue ?? 0)
    }

    /// Does what the RESTART would otherwise do with the writer held, while writes go on, in rounds: a PASSIVE pass
    /// copies what was committed during the round before, then the database file (which a PASSIVE pass leaves
    /// unsynced while new frames keep arriving) and the WAL are synced. Each round has less to flush than the one
    /// before, until what arrived during one is a few pages; the RESTART's own `fdatasync`s then flush only that.
    /// An `fdatasync` takes as long as what it flushes: a second of copied pages took 40–70 ms on the benchmark
    /// machine's virtual disk, and with the writer held that stalled every room (bench/HISTORY.md, session 30).
    private func prepareRestart(after pass: (log: Int64, checkpointed: Int64)) {
        var last = pass
        for _ in 0..<Self.maxPreparingRounds {
            guard let next = passive() else { return }
            passes.add(1, ordering: .relaxed)
            try? connection.flushToDisk(.database)
            try? connection.flushToDisk(.journal)
            // `log` counts the frames there when a pass began: the new ones were committed during the round before.
            let committedMeanwhile = next.log >= last.log ? next.log - last.log : next.log
            last = next
            if committedMeanwhile <= Self.catchUpFrames { break }
        }
    }

    /// Frames committed during a round that are left for the RESTART (256 pages: a few transactions at this
    /// server's rates), and the most rounds spent before it.
    static let catchUpFrames: Int64 = 256
    static let maxPreparingRounds = 4

    private func walSize() -> Int {
        var status = stat()
        return stat(walPath, &status) == 0 ? Int(status.st_size) : 0
    }

    /// Stops the thread and closes its connection; returns when both are done. Later calls return at once.
    func stop() {
        condition.lock()
        if stopped {
            condition.unlock()
            return
        }
        stopped = true
        condition.broadcast()
        condition.unlock()
        finished.wait()
    }
}

import Foundation

/// Moves WAL pages into the database file on its own thread and connection, so the fsyncs of a checkpoint never
/// run inside a commit on the writer's thread (SQLite's automatic checkpoint would: with a busy disk that stalls
/// every room for hundreds of milliseconds). The writer's automatic checkpoint is turned off when this runs.
///
/// The WAL only starts over when a write begins with all of it copied, which steady writes never allow (each
/// PASSIVE pass ends behind the commits made meanwhile), so under load it grew without bound (1.8 GB in 30 s of
/// churn). Once it is over `truncateAboveBytes`, the rest is copied with writes held off and the file truncated:
/// the PASSIVE pass just before copied the bulk, so the writer waits only for what was committed during it.
final class Checkpointer: @unchecked Sendable {  // `stopped` and the wake-up are guarded by `condition`
    private let connection: SQLiteConnection
    private let walPath: String
    private let interval: TimeInterval
    private let truncateAboveBytes: Int
    /// Runs its argument between two writes, holding the writer off meanwhile.
    private let withWriterHeld: @Sendable (() -> Void) -> Void
    private let condition = NSCondition()
    private var stopped = false
    private let finished = DispatchSemaphore(value: 0)

    /// A TRUNCATE checkpoint waits for readers on old snapshots in SQLite's busy handler; it gives up after this
    /// (having copied what it could) and tries again at the next pass rather than hold the writer off longer.
    static let busyTimeoutMilliseconds: Int32 = 100

    init(path: String, interval: TimeInterval = 1, truncateAboveBytes: Int,
         withWriterHeld: @escaping @Sendable (() -> Void) -> Void) throws {
        connection = try SQLiteConnection.openWriter(path: path, busyTimeoutMilliseconds: Self.busyTimeoutMilliseconds)
        walPath = path + "-wal"
        self.interval = interval
        self.truncateAboveBytes = truncateAboveBytes
        self.withWriterHeld = withWriterHeld
        let thread = Thread { [self] in self.run() }
        thread.name = "parlor-checkpoint"
        thread.start()
    }

    private func run() {
        condition.lock()
        while !stopped {
            condition.unlock()
            // PASSIVE: copies what no reader still needs, never waits for or blocks the writer.
            try? connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
            if walSize() > truncateAboveBytes {
                withWriterHeld { try? self.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
            }
            condition.lock()
            if !stopped { _ = condition.wait(until: Date().addingTimeInterval(interval)) }
        }
        condition.unlock()
        connection.close()
        finished.signal()
    }

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

import Foundation

/// Moves WAL pages into the database file on its own thread and connection, so the fsyncs of a checkpoint never
/// run inside a commit on the writer's thread (SQLite's automatic checkpoint would: with a busy disk that stalls
/// every room for hundreds of milliseconds). The writer's automatic checkpoint is turned off when this runs.
final class Checkpointer: @unchecked Sendable {  // `stopped` and the wake-up are guarded by `condition`
    private let connection: SQLiteConnection
    private let interval: TimeInterval
    private let condition = NSCondition()
    private var stopped = false
    private let finished = DispatchSemaphore(value: 0)

    init(path: String, busyTimeoutMilliseconds: Int32, interval: TimeInterval = 1) throws {
        connection = try SQLiteConnection.openWriter(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        self.interval = interval
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
            condition.lock()
            if !stopped { _ = condition.wait(until: Date().addingTimeInterval(interval)) }
        }
        condition.unlock()
        connection.close()
        finished.signal()
    }

    /// Stops the thread and closes its connection; returns when both are done.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
        finished.wait()
    }
}

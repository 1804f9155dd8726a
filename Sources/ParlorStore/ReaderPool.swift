import Foundation

/// A fixed set of read-only connections. When all are in use a caller waits for one to come
/// back instead of opening more, which bounds file descriptors and memory.
// A connection is used by a single caller between check-out and check-in.
final class ReaderPool: @unchecked Sendable {  // idle, checkedOut and isClosed are only touched holding `condition`
    private let condition = NSCondition()
    private var idle: [SQLiteConnection]
    private var checkedOut = 0
    private var isClosed = false

    init(_ connections: [SQLiteConnection]) {
        idle = connections
    }

    /// Runs `body` with a reader of its own; waits while every reader is busy.
    func withReader<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        let connection = try checkOut()
        defer { checkIn(connection) }
        return try body(connection)
    }

    /// Waits for readers in use to come back, then closes them all. Idempotent.
    func close() {
        condition.lock()
        defer { condition.unlock() }
        isClosed = true
        condition.broadcast()  // waiting callers fail instead of waiting forever
        while checkedOut > 0 { condition.wait() }
        for connection in idle { connection.close() }
        idle.removeAll()
    }

    private func checkOut() throws -> SQLiteConnection {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if isClosed { throw StoreError.closed() }
            if let connection = idle.popLast() {
                checkedOut += 1
                return connection
            }
            condition.wait()
        }
    }

    private func checkIn(_ connection: SQLiteConnection) {
        condition.lock()
        defer { condition.unlock() }
        idle.append(connection)
        checkedOut -= 1
        // Broadcast, not signal: the waiter may be close(), which a single signal could miss.
        condition.broadcast()
    }
}

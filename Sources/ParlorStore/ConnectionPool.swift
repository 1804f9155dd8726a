import Foundation

/// A fixed set of connections, SQLite's readers or PostgreSQL's pool. When all are in use a caller waits for one to
/// come back instead of opening more, which bounds file descriptors, memory and the server's connections.
// A connection is used by a single caller between check-out and check-in.
public final class ConnectionPool<Connection: SQLConnection>: @unchecked Sendable {  // idle, checkedOut and isClosed are only touched holding `condition`
    private let condition = NSCondition()
    private var idle: [Connection]
    private var checkedOut = 0
    private var isClosed = false
    /// What a caller gets once the pool is closed: each database layer's own "closed" error.
    private let closedError: @Sendable () -> any Error

    public init(_ connections: [Connection], closedError: @escaping @Sendable () -> any Error) {
        idle = connections
        self.closedError = closedError
    }

    /// Runs `body` with a connection of its own; waits while every connection is busy.
    public func withConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        let connection = try checkOut()
        defer {
            // A body that failed mid-transaction (a lost connection) leaves nothing open for the next user.
            if connection.isInTransaction { try? connection.execute("ROLLBACK") }
            checkIn(connection)
        }
        return try body(connection)
    }

    /// Waits for connections in use to come back, then closes them all. Idempotent.
    public func close() {
        condition.lock()
        defer { condition.unlock() }
        isClosed = true
        condition.broadcast()  // waiting callers fail instead of waiting forever
        while checkedOut > 0 { condition.wait() }
        for connection in idle { connection.close() }
        idle.removeAll()
    }

    private func checkOut() throws -> Connection {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if isClosed { throw closedError() }
            if let connection = idle.popLast() {
                checkedOut += 1
                return connection
            }
            condition.wait()
        }
    }

    private func checkIn(_ connection: Connection) {
        condition.lock()
        defer { condition.unlock() }
        idle.append(connection)
        checkedOut -= 1
        // Broadcast, not signal: the waiter may be close(), which a single signal could miss.
        condition.broadcast()
    }
}

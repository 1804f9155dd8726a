import Foundation

/// A fixed set of connections for reads and short writes from any thread. When all are in use a caller waits for
/// one to come back instead of opening more, which bounds the server's connections.
final class PostgresPool: @unchecked Sendable {  // idle, checkedOut and isClosed are only touched holding `condition`
    private let condition = NSCondition()
    private var idle: [PostgresConnection]
    private var checkedOut = 0
    private var isClosed = false

    init(_ connections: [PostgresConnection]) {
        idle = connections
    }

    /// Runs `body` with a connection of its own; waits while every connection is busy.
    func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let connection = try checkOut()
        defer {
            // A body that failed mid-transaction (connection lost) leaves nothing open for the next user.
            if connection.isInTransaction { try? connection.execute("ROLLBACK") }
            checkIn(connection)
        }
        return try body(connection)
    }

    /// Waits for connections in use to come back, then closes them all. Idempotent.
    func close() {
        condition.lock()
        defer { condition.unlock() }
        isClosed = true
        condition.broadcast()
        while checkedOut > 0 { condition.wait() }
        for connection in idle { connection.close() }
        idle.removeAll()
    }

    private func checkOut() throws -> PostgresConnection {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if isClosed { throw PostgresError.misuse("the database is closed") }
            if let connection = idle.popLast() {
                checkedOut += 1
                return connection
            }
            condition.wait()
        }
    }

    private func checkIn(_ connection: PostgresConnection) {
        condition.lock()
        defer { condition.unlock() }
        idle.append(connection)
        checkedOut -= 1
        condition.broadcast()
    }
}

/// A PostgreSQL failure: the server's SQLSTATE when it answered, or why the connection failed when it did not.
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// The five-character SQLSTATE, e.g. "23505" (unique_violation); nil when no server answered.
    public var sqlState: String?
    public var message: String
    public var sql: String?
    /// The connection is gone (server down, network cut, server shutdown, never reached): another connection, or
    /// this one reset, may work. Whatever transaction it had is lost.
    public var connectionLost: Bool

    public init(sqlState: String? = nil, message: String, sql: String? = nil, connectionLost: Bool = false) {
        self.sqlState = sqlState
        self.message = message
        self.sql = sql
        self.connectionLost = connectionLost
    }

    /// Class 23: a UNIQUE, PRIMARY KEY, FOREIGN KEY, CHECK or NOT NULL constraint refused the change.
    public var isConstraintViolation: Bool { sqlState?.hasPrefix("23") == true }
    /// 23505: a UNIQUE index or PRIMARY KEY refused a duplicate.
    public var isUniqueViolation: Bool { sqlState == "23505" }
    /// 23503: a row referenced a missing parent row.
    public var isForeignKeyViolation: Bool { sqlState == "23503" }

    /// The database could not do the work, whatever the statement: connection lost, server shutting down or
    /// starting, disk full, out of memory or I/O error. Requesters are told to try later.
    public var isStorageFailure: Bool {
        if connectionLost { return true }
        guard let sqlState else { return false }
        // 08 connection exception, 53 insufficient resources (53100 disk full), 58 system error (58030 io_error),
        // 57P01–57P03 admin/crash shutdown and cannot connect now, XX internal error (data corrupted).
        return sqlState.hasPrefix("08") || sqlState.hasPrefix("53") || sqlState.hasPrefix("58") || sqlState.hasPrefix("XX")
            || ["57P01", "57P02", "57P03"].contains(sqlState)
    }

    public var description: String {
        let state = sqlState.map { " \($0)" } ?? ""
        let lost = connectionLost ? " (connection lost)" : ""
        let statement = sql.map { " in: \($0)" } ?? ""
        return "PostgreSQL error\(state)\(lost): \(message)\(statement)"
    }

    static func misuse(_ message: String) -> PostgresError {
        PostgresError(message: message)
    }
}

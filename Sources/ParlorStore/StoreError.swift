import CSQLite

/// An SQLite failure, with the statement that caused it when there was one.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// The extended result code, e.g. 2067 (`SQLITE_CONSTRAINT_UNIQUE`).
    public var code: Int32
    /// `sqlite3_errmsg` at the time of the failure, or the store's own explanation.
    public var message: String
    public var sql: String?

    public init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    /// The primary result code (the low byte of `code`), e.g. 19 (`SQLITE_CONSTRAINT`).
    public var primaryCode: Int32 { code & 0xFF }

    /// A UNIQUE, PRIMARY KEY, FOREIGN KEY, CHECK or NOT NULL constraint refused the change.
    public var isConstraintViolation: Bool { primaryCode == SQLITE_CONSTRAINT }

    /// A UNIQUE index or PRIMARY KEY refused a duplicate (e.g. a name already taken).
    public var isUniqueViolation: Bool {
        code == Self.constraintUnique || code == Self.constraintPrimaryKey
    }

    /// A row referenced a missing parent row.
    public var isForeignKeyViolation: Bool { code == Self.constraintForeignKey }

    /// The storage failed rather than the statement: disk full, I/O error, read-only or damaged file. Writes may work
    /// again once the cause is fixed; nothing about the request was wrong.
    public var isStorageFailure: Bool {
        [SQLITE_FULL, SQLITE_IOERR, SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_CORRUPT, SQLITE_NOTADB, SQLITE_NOMEM]
            .contains(primaryCode)
    }

    /// Another connection held a lock for longer than the busy timeout.
    public var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }

    public var description: String {
        let kind = String(cString: sqlite3_errstr(code))
        let statement = sql.map { " in: \($0)" } ?? ""
        return "SQLite error \(code) (\(kind)): \(message)\(statement)"
    }

    // The extended-code macros are function-like expressions that Swift does not import.
    private static let constraintForeignKey = SQLITE_CONSTRAINT | (3 << 8)
    private static let constraintPrimaryKey = SQLITE_CONSTRAINT | (6 << 8)
    private static let constraintUnique = SQLITE_CONSTRAINT | (8 << 8)
}

extension StoreError {
    /// The database or connection was closed before this call.
    static func closed(sql: String? = nil) -> StoreError {
        StoreError(code: SQLITE_MISUSE, message: "the database is closed", sql: sql)
    }

    /// A misuse of the API that SQLite itself would not report clearly.
    static func misuse(_ message: String, sql: String? = nil) -> StoreError {
        StoreError(code: SQLITE_MISUSE, message: message, sql: sql)
    }
}

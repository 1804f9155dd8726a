import CSQLite

// Parameterized statements, prepared once per connection and reused by SQL text.
extension SQLiteConnection {
    /// Runs one statement and returns how many rows it inserted, updated or deleted.
    @discardableResult
    public func run(_ sql: String, _ parameters: [SQLValue] = []) throws -> Int {
        try withStatement(sql, parameters) { statement in
            while try step(statement, sql: sql) {}
            return Int(sqlite3_changes(try openHandle(sql: sql)))
        }
    }

    /// Runs one statement and returns all its rows.
    public func query(_ sql: String, _ parameters: [SQLValue] = []) throws -> [Row] {
        try withStatement(sql, parameters) { statement in
            let columns = columnNames(of: statement)
            var rows: [Row] = []
            while try step(statement, sql: sql) {
                rows.append(Row(columns: columns, values: currentValues(of: statement)))
            }
            return rows
        }
    }

    /// Runs one statement and returns its first row, if any.
    public func queryOne(_ sql: String, _ parameters: [SQLValue] = []) throws -> Row? {
        try withStatement(sql, parameters) { statement in
            guard try step(statement, sql: sql) else { return nil }
            return Row(columns: columnNames(of: statement), values: currentValues(of: statement))
        }
    }

    /// Runs one statement and returns the first column of its first row as an integer, without building a row
    /// (`UPDATE … RETURNING n` on a hot path).
    public func queryInteger(_ sql: String, _ parameters: [SQLValue] = []) throws -> Int64? {
        try withStatement(sql, parameters) { statement in
            guard try step(statement, sql: sql), sqlite3_column_type(statement, 0) != SQLITE_NULL else { return nil }
            let value = sqlite3_column_int64(statement, 0)
            while try step(statement, sql: sql) {}
            return value
        }
    }

    // MARK: - Statement cache

    /// Beyond this many distinct SQL texts the cache starts over, so SQL built at run time
    /// (say, an IN list per size) cannot grow it without bound.
    private static let statementCacheLimit = 256

    /// Binds `parameters` to the cached statement for `sql`, runs `body`, then resets the
    /// statement and clears its bindings, so it holds no lock or value between uses.
    private func withStatement<T>(
        _ sql: String, _ parameters: [SQLValue], _ body: (OpaquePointer) throws -> T
    ) throws -> T {
        let statement = try cachedStatement(for: sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        try bind(parameters, to: statement, sql: sql)
        return try body(statement)
    }

    private func cachedStatement(for sql: String) throws -> OpaquePointer {
        // The recent statements first: a hot path runs a handful of SQL literals, and the same literal compares
        // equal by its storage at once, where the dictionary hashed the whole text (~880 instructions a statement).
        let length = sql.utf8.count
        let recent = recentStatements
        for index in recent.indices where recent[index].length == length && recent[index].sql == sql {
            return recent[index].statement
        }
        let statement: OpaquePointer
        if let cached = statements[sql] {
            statement = cached
        } else {
            statement = try prepare(sql)
            if statements.count >= Self.statementCacheLimit { finalizeStatements() }
            statements[sql] = statement
        }
        let entry = (sql: sql, length: length, statement: statement)
        if recentStatements.count < Self.recentStatementLimit {
            recentStatements.append(entry)
        } else {
            recentStatements[nextRecentSlot] = entry
            nextRecentSlot = (nextRecentSlot + 1) % Self.recentStatementLimit
        }
        return statement
    }

    /// How many statements `cachedStatement` looks at before the dictionary (a command's write path uses about six).
    private static let recentStatementLimit = 12

    private func prepare(_ sql: String) throws -> OpaquePointer {
        let handle = try openHandle(sql: sql)
        return try Self.numberedParameters(sql).withCString { text in
            var statement: OpaquePointer?
            var tail: UnsafePointer<CChar>?
            // PERSISTENT: the statement is kept for the connection's lifetime.
            let flags = UInt32(SQLITE_PREPARE_PERSISTENT)
            let result = sqlite3_prepare_v3(handle, text, -1, flags, &statement, &tail)
            guard result == SQLITE_OK else { throw error(result, sql: sql) }
            guard let statement else { throw StoreError.misuse("no statement to run (empty SQL)", sql: sql) }

            // Silently ignoring a second statement would be a bug magnet; only blanks and comments may follow.
            if let tail, containsStatement(tail, handle: handle) {
                sqlite3_finalize(statement)
                throw StoreError.misuse("run/query take one statement; use execute(_:) for scripts", sql: sql)
            }
            return statement
        }
    }

    /// `sql` with PostgreSQL's `$1`, `$2`, … written as SQLite's `?1`, `?2`, … (`SQLConnection`'s shared numbering),
    /// outside quoted strings and names. SQLite would read `$1` as a named parameter numbered by first appearance,
    /// which binds the wrong value when `$2` comes first. Once per prepare, not per run.
    static func numberedParameters(_ sql: String) -> String {
        guard sql.utf8.contains(UInt8(ascii: "$")) else { return sql }
        var output: [UInt8] = []
        output.reserveCapacity(sql.utf8.count)
        var quote: UInt8?
        var previous: UInt8 = 0
        for byte in sql.utf8 {
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\"") {
                quote = byte
            } else if previous == UInt8(ascii: "$"), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                output[output.count - 1] = UInt8(ascii: "?")
            }
            output.append(byte)
            previous = quote == nil ? byte : 0
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Whether `text` holds anything but blanks and comments (a statement, or garbage).
    private func containsStatement(_ text: UnsafePointer<CChar>, handle: OpaquePointer) -> Bool {
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        let result = sqlite3_prepare_v2(handle, text, -1, &statement, nil)
        return result != SQLITE_OK || statement != nil
    }

    func finalizeStatements() {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements.removeAll()
        recentStatements.removeAll()
        nextRecentSlot = 0
    }

    // MARK: - Binding and stepping

    private func bind(_ parameters: [SQLValue], to statement: OpaquePointer, sql: String) throws {
        let expected = Int(sqlite3_bind_parameter_count(statement))
        guard parameters.count == expected else {
            throw StoreError(
                code: SQLITE_RANGE, message: "statement takes \(expected) parameter(s) but got \(parameters.count)", sql: sql)
        }
        for (offset, value) in parameters.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .null:
                result = sqlite3_bind_null(statement, index)
            case .integer(let number):
                result = sqlite3_bind_int64(statement, index, number)
            case .real(let number):
                result = sqlite3_bind_double(statement, index, number)
            case .text(let string):
                // TRANSIENT: SQLite copies the bytes, which are only valid inside this closure.
                result = string.withCString { pointer in
                    sqlite3_bind_text64(
                        statement, index, pointer, UInt64(string.utf8.count), parlor_sqlite_transient(), UInt8(SQLITE_UTF8))
                }
            case .blob(let bytes) where bytes.isEmpty:
                // An empty array may have no base address, and a NULL pointer would bind NULL.
                result = sqlite3_bind_zeroblob(statement, index, 0)
            case .blob(let bytes):
                result = bytes.withUnsafeBytes { buffer in
                    sqlite3_bind_blob64(statement, index, buffer.baseAddress, UInt64(buffer.count), parlor_sqlite_transient())
                }
            }
            guard result == SQLITE_OK else { throw error(result, sql: sql) }
        }
    }

    /// Advances `statement`; true when a row is ready, false when done.
    private func step(_ statement: OpaquePointer, sql: String) throws -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let result: throw error(result, sql: sql)
        }
    }

    private func columnNames(of statement: OpaquePointer) -> ColumnNames {
        ColumnNames((0..<sqlite3_column_count(statement)).map { String(cString: sqlite3_column_name(statement, $0)) })
    }

    private func currentValues(of statement: OpaquePointer) -> [SQLValue] {
        (0..<sqlite3_column_count(statement)).map { column in
            switch sqlite3_column_type(statement, column) {
            case SQLITE_INTEGER:
                return .integer(sqlite3_column_int64(statement, column))
            case SQLITE_FLOAT:
                return .real(sqlite3_column_double(statement, column))
            case SQLITE_TEXT:
                // Pointer first, then length: the documented order for a conversion-free read.
                guard let text = sqlite3_column_text(statement, column) else { return .text("") }
                let count = Int(sqlite3_column_bytes(statement, column))
                return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
            case SQLITE_BLOB:
                guard let blob = sqlite3_column_blob(statement, column) else { return .blob([]) }
                let count = Int(sqlite3_column_bytes(statement, column))
                return .blob(Array(UnsafeRawBufferPointer(start: blob, count: count)))
            default:
                return .null
            }
        }
    }
}

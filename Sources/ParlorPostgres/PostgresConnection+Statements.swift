import CLibPQ
import Foundation
import ParlorStore

// Parameterized statements ($1, $2, …), prepared once per session and reused by SQL text, with typed results.
extension PostgresConnection {
    /// Runs one statement and returns how many rows it inserted, updated or deleted.
    @discardableResult
    public func run(_ sql: String, _ parameters: [SQLValue] = []) throws(PostgresError) -> Int {
        let result = try perform(sql, parameters)
        defer { PQclear(result) }
        return Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    /// Runs one statement and returns all its rows.
    public func query(_ sql: String, _ parameters: [SQLValue] = []) throws(PostgresError) -> [Row] {
        let result = try perform(sql, parameters)
        defer { PQclear(result) }
        return Self.rows(of: result)
    }

    /// Runs one statement and returns its first row, if any.
    public func queryOne(_ sql: String, _ parameters: [SQLValue] = []) throws(PostgresError) -> Row? {
        try query(sql, parameters).first
    }

    /// Beyond this many distinct SQL texts statements run unnamed (not kept), so SQL built at run time cannot
    /// grow the session's prepared statements without bound.
    private static let preparedLimit = 256

    /// Binds `parameters` (text, except blobs in binary; the server infers each type from the statement) and runs
    /// the statement prepared for `sql`.
    private func perform(_ sql: String, _ parameters: [SQLValue]) throws(PostgresError) -> OpaquePointer {
        let handle = try openHandle()
        let name = try preparedName(for: sql, handle: handle)
        var values: [UnsafeMutablePointer<CChar>?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        var types: [Oid] = []
        defer { values.forEach { free($0) } }
        for parameter in parameters {
            switch parameter {
            case .null: values.append(nil); lengths.append(0); formats.append(0); types.append(0)
            case .integer(let value): values.append(strdup(String(value))); lengths.append(0); formats.append(0); types.append(0)
            case .real(let value): values.append(strdup("\(value)")); lengths.append(0); formats.append(0); types.append(0)
            case .text(let value): values.append(strdup(value)); lengths.append(0); formats.append(0); types.append(0)
            case .blob(let bytes):
                guard let buffer = malloc(max(1, bytes.count))?.assumingMemoryBound(to: CChar.self) else {
                    throw PostgresError.misuse("out of memory binding \(bytes.count) bytes")
                }
                bytes.withUnsafeBytes { raw in
                    if let base = raw.baseAddress { memcpy(buffer, base, bytes.count) }
                }
                values.append(buffer); lengths.append(Int32(bytes.count)); formats.append(1); types.append(Self.byteaOID)
            }
        }
        let count = Int32(parameters.count)
        let result = values.map { UnsafePointer($0) }.withUnsafeBufferPointer { valuePointers in
            if let name {
                return PQexecPrepared(handle, name, count, valuePointers.baseAddress, lengths, formats, 0)
            }
            return PQexecParams(handle, sql, count, types, valuePointers.baseAddress, lengths, formats, 0)
        }
        guard let result, PQresultStatus(result) == PGRES_COMMAND_OK || PQresultStatus(result) == PGRES_TUPLES_OK else {
            let failure = error(from: result, sql: sql)
            PQclear(result)
            throw failure
        }
        return result
    }

    /// The name of the session's statement for `sql`, preparing it on first use; nil past the limit.
    private func preparedName(for sql: String, handle: OpaquePointer) throws(PostgresError) -> String? {
        if let name = prepared[sql] { return name }
        guard prepared.count < Self.preparedLimit else { return nil }
        let name = "parlor_\(prepared.count + 1)"
        let result = PQprepare(handle, name, sql, 0, nil)
        defer { PQclear(result) }
        try check(result, sql: sql)
        prepared[sql] = name
        return name
    }

    // Type OIDs (pg_type), fixed since PostgreSQL's early days.
    private static let boolOID: Oid = 16, byteaOID: Oid = 17, int8OID: Oid = 20, int2OID: Oid = 21, int4OID: Oid = 23,
                       oidOID: Oid = 26, float4OID: Oid = 700, float8OID: Oid = 701, numericOID: Oid = 1700

    /// The result's rows, each value typed by its column: integers, booleans (as 1 and 0, like SQLite's), reals,
    /// bytea as bytes, everything else as text.
    static func rows(of result: OpaquePointer) -> [Row] {
        let rowCount = PQntuples(result), columnCount = PQnfields(result)
        let names = (0..<columnCount).map { String(cString: PQfname(result, $0)) }
        let types = (0..<columnCount).map { PQftype(result, $0) }
        var values: [[SQLValue]] = []
        values.reserveCapacity(Int(rowCount))
        for row in 0..<rowCount {
            values.append((0..<columnCount).map { column in
                value(result, row: row, column: column, type: types[Int(column)])
            })
        }
        return Row.rows(columnNames: names, values: values)
    }

    private static func value(_ result: OpaquePointer, row: Int32, column: Int32, type: Oid) -> SQLValue {
        guard PQgetisnull(result, row, column) == 0, let pointer = PQgetvalue(result, row, column) else { return .null }
        let length = Int(PQgetlength(result, row, column))
        let text = pointer.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
        switch type {
        case int8OID, int4OID, int2OID, oidOID:
            return Int64(text).map(SQLValue.integer) ?? .text(text)
        case boolOID:
            return .integer(text == "t" ? 1 : 0)
        case float4OID, float8OID:
            return Double(text).map(SQLValue.real) ?? .text(text)
        case numericOID:
            return Int64(text).map(SQLValue.integer) ?? Double(text).map(SQLValue.real) ?? .text(text)
        case byteaOID:
            var count = 0
            guard let bytes = PQunescapeBytea(pointer.withMemoryRebound(to: UInt8.self, capacity: length) { $0 }, &count) else {
                return .null
            }
            defer { PQfreemem(bytes) }
            return .blob(Array(UnsafeBufferPointer(start: bytes, count: count)))
        default:
            return .text(text)
        }
    }
}

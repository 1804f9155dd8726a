import CLibPQ
import Foundation
import ParlorStore

/// One libpq connection. Not thread-safe by itself: `PostgresDatabase` hands it out under a lock or from its pool,
/// and bodies must not keep it after they return.
public final class PostgresConnection {
    /// `nil` once closed.
    private(set) var handle: OpaquePointer?
    let url: PostgresURL
    /// Names of the statements prepared on this session, by SQL text (PostgresConnection+Statements.swift).
    var prepared: [String: String] = [:]

    /// Connects to `url`; throws a `PostgresError` with `connectionLost` when the server cannot be reached.
    public init(url: PostgresURL) throws(PostgresError) {
        self.url = url
        handle = try Self.connect(url)
    }

    deinit {
        close()
    }

    public func close() {
        if let handle { PQfinish(handle) }
        handle = nil
        prepared.removeAll()
    }

    /// Whether the session is up (it may still fail on the next statement if the server went away since).
    public var isConnected: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// Connects again if the session was lost. Only between transactions: a reset inside one would run the
    /// rest of its statements outside of it.
    public func reconnectIfNeeded() throws(PostgresError) {
        guard let handle else { throw PostgresError.misuse("the connection is closed") }
        guard PQstatus(handle) == CONNECTION_BAD else { return }
        prepared.removeAll()  // they died with the old session
        PQreset(handle)
        guard PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError(message: "cannot reconnect to \(url): \(Self.errorText(handle))", connectionLost: true)
        }
    }

    /// Runs a script of one or more statements without parameters (migrations, BEGIN, COMMIT, SAVEPOINT).
    public func execute(_ sql: String) throws(PostgresError) {
        let handle = try openHandle()
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        try check(result, sql: sql)
    }

    func openHandle() throws(PostgresError) -> OpaquePointer {
        guard let handle else { throw PostgresError.misuse("the connection is closed") }
        return handle
    }

    /// Throws unless `result` reports success; says whether the connection was lost on the way.
    func check(_ result: OpaquePointer?, sql: String?) throws(PostgresError) {
        let status = result.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        guard status != PGRES_COMMAND_OK, status != PGRES_TUPLES_OK else { return }
        throw error(from: result, sql: sql)
    }

    func error(from result: OpaquePointer?, sql: String?) -> PostgresError {
        let sqlState = result.flatMap { PQresultErrorField($0, Self.diagSQLState) }.map { String(cString: $0) }
        let primary = result.flatMap { PQresultErrorField($0, Self.diagMessage) }.map { String(cString: $0) }
        let lost = handle.map { PQstatus($0) == CONNECTION_BAD } ?? true
        return PostgresError(sqlState: sqlState, message: primary ?? handle.map(Self.errorText) ?? "the connection is closed",
                             sql: sql, connectionLost: lost)
    }

    // PG_DIAG_SQLSTATE and PG_DIAG_MESSAGE_PRIMARY are character-literal macros, which Swift does not import.
    private static let diagSQLState = Int32(UInt8(ascii: "C"))
    private static let diagMessage = Int32(UInt8(ascii: "M"))

    static func errorText(_ handle: OpaquePointer) -> String {
        String(cString: PQerrorMessage(handle)).trimmingTrailingNewlines
    }

    /// libpq parses the URL; the defaults before it (a connect timeout, the application name seen in
    /// pg_stat_activity) apply unless the URL sets them.
    private static func connect(_ url: PostgresURL) throws(PostgresError) -> OpaquePointer {
        let keywords = ["connect_timeout", "application_name", "dbname"]
        let values = ["10", "parlor", url.string]
        let owned: [UnsafeMutablePointer<CChar>?] = (keywords + values).map { strdup($0) }
        defer { owned.forEach { free($0) } }
        let keyPointers: [UnsafePointer<CChar>?] = owned[0..<keywords.count].map { UnsafePointer($0) } + [nil]
        let valuePointers: [UnsafePointer<CChar>?] = owned[keywords.count...].map { UnsafePointer($0) } + [nil]
        let handle: OpaquePointer? = PQconnectdbParams(keyPointers, valuePointers, 1)
        guard let handle else { throw PostgresError(message: "out of memory connecting to \(url)", connectionLost: true) }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = errorText(handle)
            PQfinish(handle)
            throw PostgresError(message: "cannot connect to \(url): \(message)", connectionLost: true)
        }
        // Notices (e.g. "relation already exists, skipping") are not errors: keep them off stderr.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        return handle
    }
}

extension PostgresConnection: SQLConnection {}

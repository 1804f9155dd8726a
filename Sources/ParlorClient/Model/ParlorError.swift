/// Every error ParlorClient throws: the server's own `code` and `detail` when the server refused something,
/// or a `client:error:*` code when the failure happened on this side (network, timeout, closed session).
///
/// Match on `code` (stable) rather than `detail` (human text): `catch let error where error.code == ParlorError.Code.roomNotFound`.
public struct ParlorError: Error, Sendable, Hashable, CustomStringConvertible {
    /// "room:error:not-found", "auth:error:invalid-token", "client:error:connection-lost", …
    public var code: String
    public var detail: String
    /// The HTTP status for errors from an HTTP route or a refused WebSocket upgrade; nil for WebSocket replies
    /// and client-side errors.
    public var status: Int?
    /// The `type` of the WebSocket request the server refused, when it says.
    public var requestType: String?

    public init(code: String, detail: String, status: Int? = nil, requestType: String? = nil) {
        self.code = code
        self.detail = detail
        self.status = status
        self.requestType = requestType
    }

    public var description: String {
        (status.map { "\($0) " } ?? "") + "\(code): \(detail)"
    }

    /// Whether the server, not the network, said no (a reply or an HTTP error body carried the code).
    public var isFromServer: Bool { !code.hasPrefix("client:") }

    /// Codes worth matching on. The server's list lives in its protocol docs; the client's are all here.
    public enum Code {
        public static let roomNotFound = "room:error:not-found"
        public static let roomClosed = "room:error:closed"
        public static let roomFull = "room:error:full"
        public static let roomNameTaken = "room:error:name-taken"
        public static let notJoined = "member:error:not-joined"
        public static let sessionNotFound = "session:error:not-found"
        public static let invalidToken = "auth:error:invalid-token"
        public static let missingToken = "auth:error:missing-token"

        /// The server could not be reached (name resolution, refused, connect timeout).
        public static let connectionFailed = "client:error:connection-failed"
        /// The connection dropped while a request was waiting for its reply; the request may or may not have happened.
        public static let connectionLost = "client:error:connection-lost"
        /// The session was closed by `close()`, or it gave up reconnecting.
        public static let closed = "client:error:closed"
        /// Reconnecting failed `maxAttempts` times in a row; the session is closed.
        public static let reconnectFailed = "client:error:reconnect-failed"
        /// No reply within the configured request timeout.
        public static let timedOut = "client:error:timeout"
        /// The server answered something this client does not understand.
        public static let invalidResponse = "client:error:invalid-response"
        /// The WebSocket upgrade did not complete as RFC 6455 requires.
        public static let handshakeFailed = "client:error:handshake-failed"
        /// The server URL cannot be used (not http:// or ws://, no host).
        public static let invalidURL = "client:error:invalid-url"
        /// The calling task was cancelled while waiting.
        public static let cancelled = "client:error:cancelled"
        /// The server was reset (close code 4004, test mode): the session and its rooms are gone; connect again.
        public static let serverReset = "session:error:server-reset"
    }

    static func connectionFailed(_ detail: String) -> ParlorError { ParlorError(code: Code.connectionFailed, detail: detail) }
    static func connectionLost(_ detail: String) -> ParlorError { ParlorError(code: Code.connectionLost, detail: detail) }
    static func invalidResponse(_ detail: String) -> ParlorError { ParlorError(code: Code.invalidResponse, detail: detail) }
    static func handshakeFailed(_ detail: String) -> ParlorError { ParlorError(code: Code.handshakeFailed, detail: detail) }
    static func timedOut(_ detail: String) -> ParlorError { ParlorError(code: Code.timedOut, detail: detail) }
    static let closedByClient = ParlorError(code: Code.closed, detail: "the session was closed")
    static let cancelled = ParlorError(code: Code.cancelled, detail: "the waiting task was cancelled")

    /// A failure that retrying the connection cannot fix: the server rejected the token.
    var isAuthenticationFailure: Bool { status == 401 || code.hasPrefix("auth:error:") }

    /// A close that ends the session for good: reconnecting cannot bring it back.
    var endsSession: Bool { isAuthenticationFailure || code == Code.serverReset }

    /// The server's JSON error body `{"code","title","detail"}` (HTTP) or `{"code","detail"}` (WebSocket).
    init(body: ParlorJSON?, status: Int?, requestType: String? = nil) {
        let code = body?["code"]?.stringValue ?? (status.map { "http:error:\($0)" } ?? ParlorError.Code.invalidResponse)
        let detail = body?["detail"]?.stringValue ?? body?["title"]?.stringValue ?? "the server gave no detail"
        self.init(code: code, detail: detail, status: status, requestType: requestType ?? body?["request_type"]?.stringValue)
    }
}

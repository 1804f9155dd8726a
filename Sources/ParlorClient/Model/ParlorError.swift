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

    /// Codes worth matching on, as plain strings (`ErrorCode` and `ClientErrorCode` list them all).
    public enum Code {
        public static let roomNotFound = ErrorCode.roomNotFound.rawValue
        public static let roomClosed = ErrorCode.roomClosed.rawValue
        public static let roomFull = ErrorCode.roomFull.rawValue
        public static let roomNameTaken = ErrorCode.roomNameTaken.rawValue
        public static let notJoined = ErrorCode.memberNotJoined.rawValue
        public static let sessionNotFound = ErrorCode.sessionNotFound.rawValue
        public static let invalidToken = ErrorCode.authInvalidToken.rawValue
        public static let missingToken = ErrorCode.authMissingToken.rawValue
        /// Stage rooms: the role does not allow it; the room is locked; the user is banned; chat or reactions too fast.
        public static let notAllowed = ErrorCode.memberNotAllowed.rawValue
        public static let roomLocked = ErrorCode.roomLocked.rawValue
        public static let banned = ErrorCode.roomBanned.rawValue
        public static let messageRateLimited = ErrorCode.messageRateLimited.rawValue
        public static let reactionRateLimited = ErrorCode.reactionRateLimited.rawValue
        /// End-to-end encrypted rooms: a join, offer or text message without encryption; a key message over 16 KiB;
        /// ciphertext that is not base64 or not in an encrypted room; recording an encrypted room.
        public static let encryptionRequired = ErrorCode.roomEncryptionRequired.rawValue
        public static let keyTooLarge = ErrorCode.e2eeKeyTooLarge.rawValue
        public static let invalidCiphertext = ErrorCode.messageInvalidCiphertext.rawValue
        public static let roomEncrypted = ErrorCode.roomEncrypted.rawValue

        /// The server could not be reached (name resolution, refused, connect timeout).
        public static let connectionFailed = ClientErrorCode.connectionFailed.rawValue
        /// The connection dropped while a request was waiting for its reply; the request may or may not have happened.
        public static let connectionLost = ClientErrorCode.connectionLost.rawValue
        /// The session was closed by `close()`, or it gave up reconnecting.
        public static let closed = ClientErrorCode.closed.rawValue
        /// Reconnecting failed `maxAttempts` times in a row; the session is closed.
        public static let reconnectFailed = ClientErrorCode.reconnectFailed.rawValue
        /// No reply within the configured request timeout.
        public static let timedOut = ClientErrorCode.timedOut.rawValue
        /// The server answered something this client does not understand.
        public static let invalidResponse = ClientErrorCode.invalidResponse.rawValue
        /// The WebSocket upgrade did not complete as RFC 6455 requires.
        public static let handshakeFailed = ClientErrorCode.handshakeFailed.rawValue
        /// The server URL cannot be used (not http(s):// or ws(s)://, no host).
        public static let invalidURL = ClientErrorCode.invalidURL.rawValue
        /// https:// or wss:// failed (untrusted certificate, name mismatch, handshake, CA not loadable); `detail` says which.
        public static let tls = ClientErrorCode.tls.rawValue
        /// The calling task was cancelled while waiting.
        public static let cancelled = ClientErrorCode.cancelled.rawValue
        /// The server was reset (close code 4004, test mode): the session and its rooms are gone; connect again.
        public static let serverReset = ClientErrorCode.serverReset.rawValue
        /// Another connection resumed this session (close code 4005): the session lives there now; do not resume it here.
        public static let sessionTakenOver = ClientErrorCode.sessionTakenOver.rawValue
    }

    static func connectionFailed(_ detail: String) -> ParlorError { ParlorError(code: Code.connectionFailed, detail: detail) }
    static func connectionLost(_ detail: String) -> ParlorError { ParlorError(code: Code.connectionLost, detail: detail) }
    static func invalidResponse(_ detail: String) -> ParlorError { ParlorError(code: Code.invalidResponse, detail: detail) }
    static func handshakeFailed(_ detail: String) -> ParlorError { ParlorError(code: Code.handshakeFailed, detail: detail) }
    static func timedOut(_ detail: String) -> ParlorError { ParlorError(code: Code.timedOut, detail: detail) }
    static func tls(_ detail: String) -> ParlorError { ParlorError(code: Code.tls, detail: detail) }
    static let closedByClient = ParlorError(code: Code.closed, detail: "the session was closed")
    static let cancelled = ParlorError(code: Code.cancelled, detail: "the waiting task was cancelled")

    /// A failure that retrying the connection cannot fix: the server rejected the token.
    var isAuthenticationFailure: Bool { status == 401 || code.hasPrefix("auth:error:") }

    /// A close that ends the session for good: reconnecting cannot bring it back.
    var endsSession: Bool { isAuthenticationFailure || code == Code.serverReset || code == Code.sessionTakenOver }

    /// The server's JSON error body `{"code","title","detail"}` (HTTP) or `{"code","detail"}` (WebSocket).
    init(body: JSONValue?, status: Int?, requestType: String? = nil) {
        let code = body?["code"]?.stringValue ?? (status.map { "http:error:\($0)" } ?? ParlorError.Code.invalidResponse)
        let detail = body?["detail"]?.stringValue ?? body?["title"]?.stringValue ?? "the server gave no detail"
        self.init(code: code, detail: detail, status: status, requestType: requestType ?? body?["request_type"]?.stringValue)
    }
}

/// Every error code the server sends, in WebSocket `error` replies and in HTTP error bodies, each with the HTTP
/// status it is answered with. Codes only ever sent over the WebSocket (marked below) carry the status an HTTP
/// route refusing the same thing would use, so every code has one. Clients match on these (stable) strings.
/// A new code is a case here, its status in `httpStatus`, and a row in docs/protocol.md's "Error codes"
/// (`ProtocolVocabularyTests` checks both).
public enum ErrorCode: String, CaseIterable, Sendable {
    // A request that cannot be read or is not well-formed.
    case requestInvalidJSON = "request:error:invalid-json"
    case requestMissingField = "request:error:missing-field"
    case requestInvalidField = "request:error:invalid-field"
    /// WebSocket only.
    case requestUnknownType = "request:error:unknown-type"
    /// WebSocket only (an HTTP body over its limit is `httpBodyTooLarge`).
    case requestTooLarge = "request:error:too-large"
    /// WebSocket only.
    case requestBinaryUnsupported = "request:error:binary-unsupported"

    case roomNotFound = "room:error:not-found"
    case roomClosed = "room:error:closed"
    /// WebSocket only.
    case roomFull = "room:error:full"
    case roomNameTaken = "room:error:name-taken"
    case roomForbidden = "room:error:forbidden"
    case roomTooManyRooms = "room:error:too-many-rooms"
    case roomServerFull = "room:error:server-full"
    case roomRateLimited = "room:error:rate-limited"
    /// A locked room refuses new members (members who drop may still resume).
    case roomLocked = "room:error:locked"
    /// The user (or its client address) is banned from the room until the ban expires.
    case roomBanned = "room:error:banned"
    /// room:record:start while the room is already being recorded (one recording per room at a time).
    case roomRecordingActive = "room:error:recording-active"
    /// room:record:stop while the room is not being recorded.
    case roomNotRecording = "room:error:not-recording"
    /// This server cannot record the room: no forwarding unit (--media mesh), no recording engine, or (several
    /// nodes) the room's audio is served by another node.
    case roomRecordingUnavailable = "room:error:recording-unavailable"
    /// The room is end-to-end encrypted (issue 40): the server cannot record or stream what it cannot hear.
    case roomEncrypted = "room:error:encrypted"
    /// An encrypted room's conversation:join or media:offer without `"e2ee": true`, or its message:send with `text`:
    /// the client must state that it encrypts (a statement, not a proof).
    case roomEncryptionRequired = "room:error:encryption-required"
    /// WebSocket only: an e2ee:key body over 16 KiB.
    case e2eeKeyTooLarge = "e2ee:error:too-large"
    /// GET /rooms/{id}/live.ogg on a server without a forwarding unit (--media mesh): there is no audio to mix.
    case roomStreamUnavailable = "room:error:stream-unavailable"
    /// No recording with that id (or not in that room).
    case recordingNotFound = "recording:error:not-found"
    /// A recording's file name other than mix.opus, track-N.opus or manifest.json.
    case recordingInvalidFile = "recording:error:invalid-file"
    /// DELETE /recordings/{rid} while it is still being recorded: stop it first.
    case recordingInProgress = "recording:error:in-progress"
    /// GET /recordings/{rid}/{file} with a Range that starts past the file's end.
    case recordingRangeNotSatisfiable = "recording:error:range-not-satisfiable"
    /// The node holding a recording's files is alive but did not answer the download proxied to it.
    case recordingNodeUnreachable = "recording:error:node-unreachable"
    /// A download proxied between nodes whose X-Parlor-Node-Auth is forged, stale (beyond ±60 s) or unexpected.
    case recordingNodeAuthInvalid = "recording:error:node-auth-invalid"

    case memberNotJoined = "member:error:not-joined"
    case memberNotFound = "member:error:not-found"
    /// WebSocket only.
    case memberUnknownTarget = "member:error:unknown-target"
    /// The member's role does not allow the request (a listener's audio:enable, a moderator action).
    case memberNotAllowed = "member:error:not-allowed"
    /// WebSocket only.
    case messageRateLimited = "message:error:rate-limited"
    case messageInvalidText = "message:error:invalid-text"
    /// message:send's `ciphertext` that is not standard base64 of at most 8 KiB, or `ciphertext` in a room that is not
    /// encrypted.
    case messageInvalidCiphertext = "message:error:invalid-ciphertext"
    /// WebSocket only.
    case reactionRateLimited = "reaction:error:rate-limited"
    /// WebSocket only.
    case reactionInvalidEmoji = "reaction:error:invalid-emoji"
    /// WebSocket only.
    case mediaTooManySenders = "media:error:too-many-senders"
    /// WebSocket only: a user or client address has as many live media sessions as allowed.
    case mediaTooManySessions = "media:error:too-many-sessions"
    /// WebSocket only: media:offer faster than --media-offer-rate.
    case mediaRateLimited = "media:error:rate-limited"
    /// WebSocket only.
    case sessionNotFound = "session:error:not-found"

    case serverInternal = "server:error:internal"
    case serverUnavailable = "server:error:unavailable"
    case serverShuttingDown = "server:error:shutting-down"

    case authInvalidToken = "auth:error:invalid-token"
    case authMissingToken = "auth:error:missing-token"
    /// A request that a server in open mode takes without a token in general, but not this one (a stage room's creation).
    case authTokenRequired = "auth:error:token-required"
    case authRateLimited = "auth:error:rate-limited"
    case authDisabled = "auth:error:disabled"
    case authInvalidCode = "auth:error:invalid-code"
    case authBlocked = "auth:error:blocked"
    case authAdminRequired = "auth:error:admin-required"

    // The HTTP layer: requests that cannot be parsed (see `HTTPParseError`), routing, connection limits.
    case httpMalformedRequest = "http:error:malformed-request"
    case httpHeaderTooLarge = "http:error:header-too-large"
    case httpTooManyHeaders = "http:error:too-many-headers"
    case httpInvalidContentLength = "http:error:invalid-content-length"
    case httpBodyTooLarge = "http:error:body-too-large"
    case httpInvalidChunk = "http:error:invalid-chunk"
    case httpUnsupportedTransferEncoding = "http:error:unsupported-transfer-encoding"
    case httpVersionNotSupported = "http:error:version-not-supported"
    case httpMissingHost = "http:error:missing-host"
    case httpNotFound = "http:error:not-found"
    case httpMethodNotAllowed = "http:error:method-not-allowed"
    case httpTooManyConnections = "http:error:too-many-connections"
    case httpOriginNotAllowed = "http:error:origin-not-allowed"
    case httpBodyTimeout = "http:error:body-timeout"
    case httpExpectationFailed = "http:error:expectation-failed"
    case httpHostNotAllowed = "http:error:host-not-allowed"

    // A WebSocket upgrade that RFC 6455 does not allow.
    case wsBadHandshake = "ws:error:bad-handshake"
    case wsUpgradeRequired = "ws:error:upgrade-required"
    case wsUnsupportedVersion = "ws:error:unsupported-version"

    /// The status of the HTTP response that carries this code.
    public var httpStatus: Int {
        switch self {
        case .requestInvalidJSON, .requestMissingField, .requestInvalidField, .requestUnknownType: 400
        case .requestTooLarge: 413
        case .requestBinaryUnsupported: 415
        case .roomNotFound, .memberNotFound, .memberUnknownTarget, .sessionNotFound: 404
        case .roomClosed: 410
        case .roomRecordingActive, .roomNotRecording, .roomRecordingUnavailable, .roomEncrypted, .recordingInProgress,
             .roomStreamUnavailable: 409
        case .recordingNotFound: 404
        case .recordingInvalidFile: 400
        case .recordingRangeNotSatisfiable: 416
        case .recordingNodeUnreachable: 502
        case .recordingNodeAuthInvalid: 403
        case .roomFull, .roomNameTaken, .mediaTooManySenders: 409
        case .roomForbidden, .memberNotJoined, .memberNotAllowed, .roomLocked, .roomBanned: 403
        case .messageRateLimited, .reactionRateLimited, .mediaTooManySessions, .mediaRateLimited: 429
        case .messageInvalidText, .messageInvalidCiphertext, .reactionInvalidEmoji, .roomEncryptionRequired: 400
        case .e2eeKeyTooLarge: 413
        case .roomTooManyRooms, .roomRateLimited: 429
        case .roomServerFull, .serverUnavailable, .serverShuttingDown: 503
        case .serverInternal: 500
        case .authInvalidToken, .authMissingToken, .authTokenRequired: 401
        case .authRateLimited: 429
        case .authDisabled, .authInvalidCode, .authBlocked, .authAdminRequired: 403
        case .httpMalformedRequest, .httpInvalidContentLength, .httpInvalidChunk, .httpMissingHost: 400
        case .httpHeaderTooLarge, .httpTooManyHeaders: 431
        case .httpBodyTooLarge: 413
        case .httpUnsupportedTransferEncoding: 501
        case .httpVersionNotSupported: 505
        case .httpNotFound: 404
        case .httpMethodNotAllowed: 405
        case .httpTooManyConnections: 429
        case .httpOriginNotAllowed: 403
        case .httpBodyTimeout: 408
        case .httpExpectationFailed: 417
        case .httpHostNotAllowed: 421
        case .wsBadHandshake: 400
        case .wsUpgradeRequired, .wsUnsupportedVersion: 426
        }
    }
}

/// The codes ParlorClient raises itself, when the failure happened on the client's side: never sent by a
/// server, so no HTTP status. Listed in docs/protocol.md's "Client error codes".
public enum ClientErrorCode: String, CaseIterable, Sendable {
    /// The server could not be reached (name resolution, refused, connect timeout).
    case connectionFailed = "client:error:connection-failed"
    /// The connection dropped while a request was waiting for its reply; the request may or may not have happened.
    case connectionLost = "client:error:connection-lost"
    /// The session was closed by `close()`, or it gave up reconnecting.
    case closed = "client:error:closed"
    /// Reconnecting failed `maxAttempts` times in a row; the session is closed.
    case reconnectFailed = "client:error:reconnect-failed"
    /// No reply within the configured request timeout.
    case timedOut = "client:error:timeout"
    /// The server answered something this client does not understand.
    case invalidResponse = "client:error:invalid-response"
    /// The WebSocket upgrade did not complete as RFC 6455 requires.
    case handshakeFailed = "client:error:handshake-failed"
    /// The server URL cannot be used (not http(s):// or ws(s)://, no host).
    case invalidURL = "client:error:invalid-url"
    /// https:// or wss:// failed: the certificate is untrusted or names another host, the handshake failed, or the
    /// CA given could not be loaded. Never followed by a plain connection.
    case tls = "client:error:tls"
    /// The calling task was cancelled while waiting.
    case cancelled = "client:error:cancelled"
    /// The server was reset (close code 4004, test mode): the session and its rooms are gone; connect again.
    case serverReset = "session:error:server-reset"
    /// Another connection resumed this session (close code 4005): the session lives there now; do not resume it here.
    case sessionTakenOver = "session:error:taken-over"
}

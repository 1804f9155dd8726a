/// The request line and header section of an HTTP/1.x request, already validated and decoded.
public struct HTTPRequestHead: Sendable {
    /// The method as sent, e.g. "GET" (methods are case-sensitive).
    public var method: String
    /// The raw request-target, e.g. "/rooms?page_size=10".
    public var target: String
    /// The percent-decoded path without the query, e.g. "/rooms".
    public var path: String
    /// Decoded query parameters ("+" decodes to a space); when a name repeats, the last value wins.
    public var query: [String: String]
    /// 0 or 1: only HTTP/1.0 and HTTP/1.1 are accepted.
    public var versionMinor: Int
    public var headers: HTTPHeaders
    /// Whether the connection may serve another request after this one.
    public var keepAlive: Bool

    public init(
        method: String,
        target: String,
        path: String,
        query: [String: String] = [:],
        versionMinor: Int = 1,
        headers: HTTPHeaders = .init(),
        keepAlive: Bool = true
    ) {
        self.method = method
        self.target = target
        self.path = path
        self.query = query
        self.versionMinor = versionMinor
        self.headers = headers
        self.keepAlive = keepAlive
    }
}

/// A complete request: head plus the (de-chunked) body.
public struct HTTPRequest: Sendable {
    public var head: HTTPRequestHead
    public var body: [UInt8]

    public init(head: HTTPRequestHead, body: [UInt8] = []) {
        self.head = head
        self.body = body
    }
}

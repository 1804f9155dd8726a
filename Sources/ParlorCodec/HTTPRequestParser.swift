/// Incremental HTTP/1.x request parser for an event-loop driven server.
///
/// Bytes are appended as they arrive, split anywhere; `next()` returns each complete request in order
/// (pipelining). Limits are enforced as soon as they are crossed, so a hostile peer can never make the
/// parser buffer much more than the limits allow. After an error the parser is dead: the connection
/// must answer with the error's status and close, because request framing is no longer known.
public struct HTTPRequestParser: Sendable {
    enum Phase: Sendable {
        case head
        case fixedBody(length: Int)
        case chunked(ChunkPhase)
        case failed(HTTPParseError)
    }

    enum ChunkPhase: Sendable {
        case size
        case data(remaining: Int)
        case dataEnd
        case trailers(byteCount: Int)
    }

    /// The request line and headers parsed so far, while the head is still arriving.
    struct PartialHead: Sendable {
        var byteCount = 0
        var requestLine: RequestLine?
        var headers = HTTPHeaders(minimumCapacity: 8)
    }

    struct RequestLine: Sendable {
        var method: String
        var target: String
        var path: String
        var query: [String: String]
        var versionMinor: Int
    }

    let limits: HTTPParserLimits
    var buffer = ReceiveBuffer()
    var phase = Phase.head
    /// Where the search for the end of the current line resumes, so bytes are scanned only once.
    var scanOffset = 0
    var partial = PartialHead()
    /// The head of the request whose body is being read.
    var currentHead: HTTPRequestHead?
    /// Decoded chunked body so far (Content-Length bodies are taken from the buffer in one piece).
    var chunkedBody: [UInt8] = []

    public init(limits: HTTPParserLimits = .init()) {
        self.limits = limits
    }

    /// Feeds received bytes. Bytes appended after a parse error are ignored.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !isFailed else { return }
        buffer.append(bytes)
    }

    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// True while a request has started but its head is not complete (for the slowloris header timeout).
    public var isInsideHead: Bool {
        guard case .head = phase else { return false }
        return partial.byteCount > 0 || !buffer.isEmpty
    }

    /// True once a request's head is complete and its body is still arriving (for the body timeout).
    public var isInsideBody: Bool {
        switch phase {
        case .fixedBody, .chunked: return true
        case .head, .failed: return false
        }
    }

    /// The head of the request whose body is still arriving (to answer `Expect: 100-continue` before the body).
    public var headAwaitingBody: HTTPRequestHead? { isInsideBody ? currentHead : nil }

    /// Bytes received but not parsed yet; the connection stops reading while this is large (pipelining).
    public var bufferedByteCount: Int { buffer.readableCount }

    /// Removes and returns the bytes buffered but not yet parsed, such as the first WebSocket frames sent
    /// right after an Upgrade request. Meant to be called between requests; any partly received head is dropped.
    public mutating func takeRemainingBytes() -> [UInt8] {
        scanOffset = 0
        partial = PartialHead()
        return buffer.readAll()
    }

    /// The next complete request, or nil if more bytes are needed.
    /// After it throws, it keeps throwing the same error: the connection must close.
    public mutating func next() throws(HTTPParseError) -> HTTPRequest? {
        if case .failed(let error) = phase { throw error }
        do throws(HTTPParseError) {
            return try advance()
        } catch {
            phase = .failed(error)
            buffer = ReceiveBuffer()
            partial = PartialHead()
            currentHead = nil
            chunkedBody = []
            throw error
        }
    }

    private var isFailed: Bool {
        if case .failed = phase { return true }
        return false
    }

    private mutating func advance() throws(HTTPParseError) -> HTTPRequest? {
        if case .head = phase {
            guard let head = try parseHead() else { return nil }
            currentHead = head
        }
        switch phase {
        case .head, .failed:
            return nil
        case .fixedBody(let length):
            guard buffer.readableCount >= length else { return nil }
            return complete(body: buffer.read(length))
        case .chunked:
            guard try decodeChunkedBody() else { return nil }
            let body = chunkedBody
            chunkedBody = []
            return complete(body: body)
        }
    }

    private mutating func complete(body: [UInt8]) -> HTTPRequest? {
        guard let head = currentHead else { return nil }
        currentHead = nil
        phase = .head
        return HTTPRequest(head: head, body: body)
    }

    /// Finds the next complete line, returning the range of its content (without CR LF or bare LF)
    /// and its full length. Remembers how far it looked when the line is not complete yet.
    mutating func nextLine() -> (content: Range<Int>, length: Int)? {
        guard let lf = buffer.firstOffset(of: ASCII.lf, from: scanOffset) else {
            scanOffset = buffer.readableCount
            return nil
        }
        scanOffset = 0
        let end = lf > 0 && buffer[lf - 1] == ASCII.cr ? lf - 1 : lf
        return (0..<end, lf + 1)
    }

    /// Length of the incomplete line at the end of the buffer, not counting a CR that may start its line ending.
    var unterminatedLineLength: Int {
        let count = buffer.readableCount
        return count > 0 && buffer[count - 1] == ASCII.cr ? count - 1 : count
    }
}

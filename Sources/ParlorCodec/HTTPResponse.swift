/// An HTTP/1.1 response to serialize onto the wire.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(status: Int, headers: HTTPHeaders = .init(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// "HTTP/1.1 <status> <reason>\r\n", the headers, an empty line, then the body unless `headOnly`
    /// (for HEAD requests; Content-Length still describes the body that would have been sent).
    /// Adds no headers itself: Date, Content-Type and Content-Length are the caller's job.
    public func serialized(headOnly: Bool = false) -> [UInt8] {
        var bytes: [UInt8] = []
        // The exact size (less for a status line other than 200's): a guess that fell short copied the body twice.
        bytes.reserveCapacity(Self.okStatusLine.count + 32 + headers.linesByteCount + 2 + (headOnly ? 0 : body.count))
        if status == 200 {
            bytes.append(contentsOf: Self.okStatusLine)
        } else {
            bytes.append(contentsOf: "HTTP/1.1 \(status) \(Self.reasonPhrase(status))\r\n".utf8)
        }
        headers.appendLines(to: &bytes)
        bytes.append(ASCII.cr)
        bytes.append(ASCII.lf)
        if !headOnly {
            bytes.append(contentsOf: body)
        }
        return bytes
    }

    /// Most responses are 200: their status line is made once.
    private static let okStatusLine = Array("HTTP/1.1 200 OK\r\n".utf8)
}

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
        bytes.reserveCapacity(64 + headers.count * 40 + (headOnly ? 0 : body.count))
        if status == 200 {
            bytes.append(contentsOf: Self.okStatusLine)
        } else {
            bytes.append(contentsOf: "HTTP/1.1 \(status) \(Self.reasonPhrase(status))\r\n".utf8)
        }
        for (name, value) in headers {
            Self.appendSanitized(name, to: &bytes)
            bytes.append(ASCII.colon)
            bytes.append(ASCII.space)
            Self.appendSanitized(value, to: &bytes)
            bytes.append(ASCII.cr)
            bytes.append(ASCII.lf)
        }
        bytes.append(ASCII.cr)
        bytes.append(ASCII.lf)
        if !headOnly {
            bytes.append(contentsOf: body)
        }
        return bytes
    }

    /// Most responses are 200: their status line is made once.
    private static let okStatusLine = Array("HTTP/1.1 200 OK\r\n".utf8)

    /// Copies header text, turning CR, LF and NUL into spaces: a value that reached us from a client
    /// must never be able to end the header line and inject headers (response splitting).
    private static func appendSanitized(_ text: String, to bytes: inout [UInt8]) {
        var text = text
        text.withUTF8 { utf8 in
            // Nearly every value is clean: check first, then copy in one go.
            guard utf8.contains(where: { $0 == ASCII.cr || $0 == ASCII.lf || $0 == 0 }) else {
                bytes.append(contentsOf: utf8)
                return
            }
            for byte in utf8 {
                bytes.append(byte == ASCII.cr || byte == ASCII.lf || byte == 0 ? ASCII.space : byte)
            }
        }
    }
}

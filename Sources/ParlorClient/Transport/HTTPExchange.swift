import ParlorCodec

/// A complete HTTP response.
struct HTTPClientResponse: Sendable {
    let status: Int
    let headers: HTTPHeaders
    let body: [UInt8]

    var json: JSONValue? { JSONValue.parse(body) }
}

/// HTTP/1.1 over a `ByteStream` (plain, or TLS for https://): one request per connection (`Connection: close`), the
/// response framed by Content-Length (Parlor always sends it) or, failing that, by the end of the connection.
struct HTTPExchange: Sendable {
    static let maxBodyBytes = 16 << 20

    let endpoint: ServerEndpoint
    let timeout: Duration
    let trust: TLSTrust

    func send(_ method: String, _ path: String, token: String?, json: JSONValue? = nil) async throws(ParlorError) -> HTTPClientResponse {
        var request = "\(method) \(endpoint.basePath)\(path) HTTP/1.1\r\nHost: \(endpoint.hostHeader)\r\n"
        request += "Accept: application/json\r\nConnection: close\r\nUser-Agent: ParlorClient\r\n"
        if let token { request += "Authorization: Bearer \(token)\r\n" }
        let message: [UInt8]
        if let json {
            let body = json.encoded()
            request += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n"
            message = Array(request.utf8) + body
        } else {
            request += "\r\n"
            message = Array(request.utf8)
        }
        let endpoint = self.endpoint, timeout = self.timeout, trust = self.trust
        return try await Blocking.run("ParlorClient HTTP \(method) \(path)") { () throws(ParlorError) -> HTTPClientResponse in
            let socket = try endpoint.openStream(trust: trust, timeout: timeout)
            defer { socket.close() }
            socket.setReceiveTimeout(timeout)
            socket.setSendTimeout(timeout)
            try socket.send(message)
            return try Self.readResponse(from: socket, timeout: timeout)
        }
    }

    private static func readResponse(from socket: any ByteStream, timeout: Duration) throws(ParlorError) -> HTTPClientResponse {
        var buffer: [UInt8] = []
        var head: (head: HTTPResponseHead, length: Int)?
        var ended = false
        while true {
            if head == nil { head = try HTTPResponseHead.parse(buffer) }
            if let (parsed, headLength) = head {
                if parsed.status < 200 && parsed.status != 101 {
                    // An interim response (100 Continue): drop it and read the real one.
                    buffer.removeFirst(headLength)
                    head = nil
                    continue
                }
                let bodyless = parsed.status == 204 || parsed.status == 304
                if let length = bodyless ? 0 : try parsed.contentLength() {
                    guard length <= maxBodyBytes else { throw .invalidResponse("response body of \(length) bytes is too large") }
                    if buffer.count - headLength >= length {
                        return HTTPClientResponse(status: parsed.status, headers: parsed.headers,
                                                  body: Array(buffer[headLength..<(headLength + length)]))
                    }
                } else if ended {
                    return HTTPClientResponse(status: parsed.status, headers: parsed.headers, body: Array(buffer[headLength...]))
                }
            }
            guard !ended else { throw .connectionLost("the server closed the connection before the response was complete") }
            guard buffer.count <= maxBodyBytes + HTTPResponseHead.maxHeadBytes else { throw .invalidResponse("response too large") }
            var chunk = [UInt8](repeating: 0, count: 16384)
            switch try socket.receive(into: &chunk) {
            case .bytes(let count): buffer += chunk[..<count]
            case .endOfStream: ended = true
            case .timedOut: throw .timedOut("no response within \(timeout)")
            }
        }
    }
}

extension HTTPRequestParser {
    /// Parses head lines as they complete; returns the head once the empty line arrives.
    mutating func parseHead() throws(HTTPParseError) -> HTTPRequestHead? {
        while let line = nextLine() {
            if line.content.isEmpty && partial.requestLine != nil {
                buffer.consume(line.length)
                let head = try finishHead()
                partial = PartialHead()
                return head
            }
            partial.byteCount += line.length
            guard partial.byteCount <= limits.maxHeaderBytes else {
                throw .headerTooLarge(limit: limits.maxHeaderBytes)
            }
            if partial.requestLine == nil {
                // Empty lines before the request line are tolerated (RFC 9112 §2.2) but count toward the limit.
                if !line.content.isEmpty {
                    partial.requestLine = try Self.parseRequestLine(buffer.slice(line.content))
                }
            } else {
                let (name, value) = try Self.parseHeaderLine(buffer.slice(line.content))
                partial.headers.add(name, value)
                guard partial.headers.count <= limits.maxHeaderCount else {
                    throw .tooManyHeaders(limit: limits.maxHeaderCount)
                }
            }
            buffer.consume(line.length)
        }
        // Fail as soon as the limit is crossed, not when the (possibly never-ending) line completes.
        guard partial.byteCount + unterminatedLineLength <= limits.maxHeaderBytes else {
            throw .headerTooLarge(limit: limits.maxHeaderBytes)
        }
        return nil
    }

    /// `METHOD SP request-target SP HTTP/1.x`
    static func parseRequestLine(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> RequestLine {
        // Exactly two spaces: found by hand, not with `split`, which builds an array per request.
        guard let firstSpace = line.firstIndex(of: ASCII.space),
              let secondSpace = line[(firstSpace + 1)...].firstIndex(of: ASCII.space),
              !line[(secondSpace + 1)...].contains(ASCII.space) else {
            throw .malformed("The request line must be \"METHOD target HTTP/1.1\", separated by single spaces.")
        }
        let (method, target, version) = (line[..<firstSpace], line[(firstSpace + 1)..<secondSpace], line[(secondSpace + 1)...])
        guard !method.isEmpty, method.allSatisfy(ASCII.isTokenChar) else {
            throw .malformed("The request method is not a valid token.")
        }
        let versionMinor = try parseVersion(version)
        guard !target.isEmpty, target.allSatisfy({ $0 > ASCII.space && $0 < 0x7F }) else {
            throw .malformed("The request target is empty or contains characters that are not visible ASCII.")
        }
        let methodString = String(decoding: method, as: UTF8.self)
        let targetString = String(decoding: target, as: UTF8.self)
        if target.elementsEqual([ASCII.asterisk]) {
            guard methodString == "OPTIONS" else {
                throw .malformed("The request target \"*\" is only allowed with OPTIONS.")
            }
            return RequestLine(method: methodString, target: targetString, path: "*", query: [:],
                               versionMinor: versionMinor)
        }
        guard target.first == ASCII.slash else {
            throw .malformed("The request target must be a path starting with \"/\".")
        }
        let (path, query) = try RequestTarget.decode(target)
        return RequestLine(method: methodString, target: targetString, path: path, query: query,
                           versionMinor: versionMinor)
    }

    private static let http11: [UInt8] = Array("HTTP/1.1".utf8)

    /// "HTTP/1.0" → 0, "HTTP/1.1" → 1; a well-formed other version is 505, anything else 400.
    static func parseVersion(_ version: ArraySlice<UInt8>) throws(HTTPParseError) -> Int {
        if version.elementsEqual(Self.http11) { return 1 }  // nearly every request
        let prefix = "HTTP/".utf8
        guard version.starts(with: prefix) else {
            throw .malformed("The request line does not end with an HTTP version.")
        }
        let numbers = version.dropFirst(prefix.count).split(separator: UInt8(ascii: "."),
                                                            omittingEmptySubsequences: false)
        guard numbers.count == 2, numbers.allSatisfy({ !$0.isEmpty && $0.allSatisfy(ASCII.isDigit) }) else {
            throw .malformed("The HTTP version is malformed.")
        }
        guard numbers[0].elementsEqual("1".utf8), numbers[1].count == 1,
              let minor = numbers[1].first, minor <= UInt8(ascii: "1") else {
            throw .versionNotSupported(String(decoding: version, as: UTF8.self))
        }
        return Int(minor - UInt8(ascii: "0"))
    }

    /// `field-name ":" OWS field-value OWS`. Runs once per header line of every request, so it works on the
    /// slice's contiguous bytes: one pass for the name up to the colon, one for the value.
    static func parseHeaderLine(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> (String, String) {
        let parsed = line.withUnsafeBufferPointer { bytes -> Result<(String, String), HTTPParseError> in
            if let first = bytes.first, ASCII.isWhitespace(first) {
                return .failure(.malformed("Header line folding (obs-fold) is not allowed."))
            }
            var colon = 0
            while colon < bytes.count, bytes[colon] != ASCII.colon {
                guard ASCII.isTokenChar(bytes[colon]) else {
                    // A bad name character, or a line without a colon: say which.
                    guard let found = bytes[colon...].firstIndex(of: ASCII.colon) else { return .failure(.malformed("A header line has no colon.")) }
                    if ASCII.isWhitespace(bytes[found - 1]) {
                        return .failure(.malformed("Whitespace between a header name and the colon is not allowed."))
                    }
                    return .failure(.malformed("A header name contains characters that are not allowed."))
                }
                colon += 1
            }
            guard colon < bytes.count else { return .failure(.malformed("A header line has no colon.")) }
            guard colon > 0 else { return .failure(.malformed("A header line has an empty name.")) }
            var start = colon + 1, end = bytes.count
            while start < end, ASCII.isWhitespace(bytes[start]) { start += 1 }
            while end > start, ASCII.isWhitespace(bytes[end - 1]) { end -= 1 }
            let name = UnsafeBufferPointer(rebasing: bytes[..<colon])
            let value = UnsafeBufferPointer(rebasing: bytes[start..<end])
            // Field values are visible characters, spaces and tabs; obs-text (0x80...) is tolerated.
            if ASCII.containsFieldValueControl(value) {
                return .failure(.malformed("The value of header \"\(String(decoding: name, as: UTF8.self))\" contains control characters."))
            }
            return .success((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        return try parsed.get()
    }

    /// Validates the complete head and decides how the body is framed.
    mutating func finishHead() throws(HTTPParseError) -> HTTPRequestHead {
        guard let line = partial.requestLine else { throw .malformed("The request line is missing.") }
        let headers = partial.headers
        let hosts = headers.count(of: "Host")
        if line.versionMinor == 1 && hosts == 0 {
            throw .missingHost
        }
        guard hosts <= 1 else {
            throw .malformed("The request has more than one Host header.")
        }
        let connection = headers.tokens("Connection")
        let keepAlive = line.versionMinor == 1
            ? !connection.contains("close")
            : connection.contains("keep-alive") && !connection.contains("close")
        phase = try bodyFraming(headers)
        return HTTPRequestHead(method: line.method, target: line.target, path: line.path, query: line.query,
                               versionMinor: line.versionMinor, headers: headers, keepAlive: keepAlive)
    }

    /// Chooses between chunked, Content-Length and no body; rejects ambiguous framing (request smuggling).
    func bodyFraming(_ headers: HTTPHeaders) throws(HTTPParseError) -> Phase {
        if headers.contains("Transfer-Encoding") {
            guard !headers.contains("Content-Length") else {
                throw .malformed("Transfer-Encoding and Content-Length must not be sent together.")
            }
            let codings = headers.tokens("Transfer-Encoding")
            guard !codings.isEmpty else {
                throw .malformed("The Transfer-Encoding header is empty.")
            }
            guard codings == ["chunked"] else {
                throw .unsupportedTransferEncoding(codings)
            }
            return .chunked(.size)
        }
        let lengths = headers.values("Content-Length")
        guard let value = lengths.first else { return .fixedBody(length: 0) }
        guard lengths.count == 1 else {
            throw .invalidContentLength("The request has more than one Content-Length header.")
        }
        let length = try Self.parseContentLength(value)
        guard length <= limits.maxBodyBytes else {
            throw .bodyTooLarge(limit: limits.maxBodyBytes)
        }
        return .fixedBody(length: length)
    }

    /// A plain decimal number; values too long to fit are returned as `Int.max` (they exceed any limit).
    static func parseContentLength(_ value: String) throws(HTTPParseError) -> Int {
        let digits = value.utf8
        guard !digits.isEmpty, digits.allSatisfy(ASCII.isDigit) else {
            throw .invalidContentLength("Content-Length \"\(value)\" is not a decimal number.")
        }
        guard digits.count <= 18 else { return Int.max }
        return digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }
}

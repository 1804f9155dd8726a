// libFuzzer target for HTTPRequestParser. Compiled into the ParlorCodec module itself (see run.sh),
// so it can look at the parser's internal state.
//
// Input layout: byte 0 picks the limits and how the bytes are fed, bytes 1–2 parameterize the feeding,
// the rest is the byte stream a client sends. Checks:
// - no crash, no hang (libFuzzer -timeout);
// - the result (requests, then the error if any) does not depend on how the stream is split:
//   one append, one or two split points, fixed-size chunks or byte at a time all agree;
// - every request respects the limits (body, header count, head size) and the framing rules
//   (version, Host, Content-Length/Transfer-Encoding, body length);
// - after an error the parser stays dead: it keeps throwing the same error, ignores new bytes,
//   holds no buffered bytes and never returns another request.

/// One parsed request, reduced to comparable values.
struct FuzzRequest: Equatable {
    var method: String
    var target: String
    var path: String
    var query: [String: String]
    var versionMinor: Int
    var headers: [[String]]
    var keepAlive: Bool
    var body: [UInt8]

    init(_ request: HTTPRequest) {
        method = request.head.method
        target = request.head.target
        path = request.head.path
        query = request.head.query
        versionMinor = request.head.versionMinor
        headers = request.head.headers.map { [$0.name, $0.value] }
        keepAlive = request.head.keepAlive
        body = request.body
    }
}

struct FuzzOutcome: Equatable {
    var requests: [FuzzRequest] = []
    var error: HTTPParseError?
}

enum HTTPParserFuzz {
    static let limitChoices: [HTTPParserLimits] = [
        HTTPParserLimits(),
        HTTPParserLimits(maxHeaderBytes: 64, maxHeaderCount: 3, maxBodyBytes: 16),
        HTTPParserLimits(maxHeaderBytes: 256, maxHeaderCount: 8, maxBodyBytes: 100),
        HTTPParserLimits(maxHeaderBytes: 1024, maxHeaderCount: 32, maxBodyBytes: 1500),
    ]

    static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("HTTP parser invariant violated: \(message())") }
    }

    /// Feeds `stream` in the given pieces, pulling requests after each one until nil or an error.
    static func run(_ stream: [UInt8], pieces: [Range<Int>], limits: HTTPParserLimits) -> FuzzOutcome {
        var parser = HTTPRequestParser(limits: limits)
        var outcome = FuzzOutcome()
        for piece in pieces {
            stream[piece].withUnsafeBytes { parser.append($0) }
            _ = parser.isInsideHead
            if let error = outcome.error {
                checkDead(&parser, error)
                continue
            }
            do throws(HTTPParseError) {
                while let request = try parser.next() {
                    let summary = FuzzRequest(request)
                    checkRequest(summary, limits: limits)
                    outcome.requests.append(summary)
                    checkState(parser, limits: limits)
                }
                checkWaiting(parser, limits: limits)
            } catch {
                outcome.error = error
                checkDead(&parser, error)
            }
        }
        if let error = outcome.error {
            parser.append([0x47, 0x45, 0x54, 0x20, 0x2F, 0x0D, 0x0A])
            checkDead(&parser, error)
        } else if case .head = parser.phase {
            // Between requests the leftover bytes can be taken out (as for an Upgrade); nothing may remain.
            _ = parser.takeRemainingBytes()
            check(parser.buffer.isEmpty && !parser.isInsideHead, "bytes left after takeRemainingBytes")
        }
        return outcome
    }

    static func checkDead(_ parser: inout HTTPRequestParser, _ error: HTTPParseError) {
        check(parser.buffer.isEmpty, "a failed parser still buffers bytes")
        for _ in 0..<2 {
            do throws(HTTPParseError) {
                let request = try parser.next()
                check(false, "a failed parser returned \(request == nil ? "nil" : "a request")")
            } catch let again {
                check(again == error, "a failed parser threw \(again) after \(error)")
            }
        }
    }

    /// The body being read can never end up over the limit, whatever is still to come.
    static func checkState(_ parser: HTTPRequestParser, limits: HTTPParserLimits) {
        check(parser.chunkedBody.count <= limits.maxBodyBytes, "chunked body of \(parser.chunkedBody.count) bytes so far")
        switch parser.phase {
        case .fixedBody(let length):
            check(length <= limits.maxBodyBytes, "reading a body of \(length) bytes")
        case .chunked(.data(let remaining)):
            check(parser.chunkedBody.count + remaining <= limits.maxBodyBytes,
                  "reading a chunk of \(remaining) more bytes after \(parser.chunkedBody.count)")
        default:
            break
        }
    }

    /// When the parser asks for more bytes, it holds only what it cannot decide on yet, never more
    /// than the limits allow: a partial line, a partial body, or a CR that may start a line ending.
    static func checkWaiting(_ parser: HTTPRequestParser, limits: HTTPParserLimits) {
        checkState(parser, limits: limits)
        let held = parser.buffer.readableCount
        switch parser.phase {
        case .head:
            check(parser.partial.byteCount + held <= limits.maxHeaderBytes + 1,
                  "waiting in the head with \(parser.partial.byteCount) + \(held) bytes")
            check(!parser.buffer.slice(0..<held).contains(ASCII.lf), "waiting in the head with a complete line buffered")
        case .fixedBody(let length):
            check(held < length, "waiting for a body of \(length) bytes with \(held) buffered")
        case .chunked(.size):
            check(held <= HTTPRequestParser.maxChunkLineLength + 1, "waiting for a chunk size with \(held) bytes")
            check(!parser.buffer.slice(0..<held).contains(ASCII.lf), "waiting for a chunk size with a complete line buffered")
        case .chunked(.data):
            check(held == 0, "waiting for chunk data with \(held) bytes buffered")
        case .chunked(.dataEnd):
            check(held == 0 || (held == 1 && parser.buffer[0] == ASCII.cr), "waiting for a chunk's CRLF with \(held) bytes")
        case .chunked(.trailers(let byteCount)):
            check(byteCount + held <= limits.maxHeaderBytes + 1, "waiting in the trailers with \(byteCount) + \(held) bytes")
            check(!parser.buffer.slice(0..<held).contains(ASCII.lf), "waiting in the trailers with a complete line buffered")
        case .failed:
            check(false, "a failed parser returned nil")
        }
    }

    static func checkRequest(_ request: FuzzRequest, limits: HTTPParserLimits) {
        check(request.body.count <= limits.maxBodyBytes, "body of \(request.body.count) bytes over \(limits.maxBodyBytes)")
        check(request.headers.count <= limits.maxHeaderCount, "\(request.headers.count) headers over \(limits.maxHeaderCount)")
        check(!request.method.isEmpty && request.method.utf8.allSatisfy(ASCII.isTokenChar), "bad method \(request.method)")
        check(request.versionMinor == 0 || request.versionMinor == 1, "version 1.\(request.versionMinor)")
        check(request.target.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "bad target \(request.target)")
        check(request.path == "*" ? request.method == "OPTIONS" && request.target == "*" : request.path.hasPrefix("/"),
              "bad path \(request.path) for target \(request.target)")

        // Each decoded character came from at least one received byte (invalid UTF-8 in values becomes
        // U+FFFD), so counting scalars gives a lower bound of the head's size on the wire.
        var headSize = request.method.unicodeScalars.count + request.target.unicodeScalars.count + "  HTTP/1.x\n".utf8.count
        for field in request.headers {
            check(!field[0].isEmpty && field[0].utf8.allSatisfy(ASCII.isTokenChar), "bad header name \(field[0])")
            headSize += field[0].unicodeScalars.count + 1 + field[1].unicodeScalars.count + 1
        }
        check(headSize <= limits.maxHeaderBytes, "head of at least \(headSize) bytes over \(limits.maxHeaderBytes)")

        func values(_ name: String) -> [String] {
            request.headers.filter { ASCII.equalsIgnoringCase($0[0], name) }.map { $0[1] }
        }
        let hosts = values("Host")
        check(hosts.count <= 1, "\(hosts.count) Host headers")
        check(request.versionMinor == 0 || hosts.count == 1, "HTTP/1.1 without Host")
        let lengths = values("Content-Length")
        let codings = values("Transfer-Encoding")
        check(lengths.isEmpty || codings.isEmpty, "both Content-Length and Transfer-Encoding")
        check(lengths.count <= 1, "\(lengths.count) Content-Length headers")
        if let length = lengths.first {
            check(Int(length).map { $0 == request.body.count } ?? false,
                  "Content-Length \(length) with a body of \(request.body.count) bytes")
        }
        if !codings.isEmpty {
            let tokens = codings.flatMap { $0.split(separator: ",") }
                .map { $0.trimmingSpacesAndTabs().lowercased() }
                .filter { !$0.isEmpty }
            check(tokens == ["chunked"], "Transfer-Encoding \(codings) accepted")
        }
        if lengths.isEmpty && codings.isEmpty {
            check(request.body.isEmpty, "a body without framing headers")
        }
    }

    /// Splits `count` bytes into pieces as `mode` and the two parameter bytes say.
    static func pieces(count: Int, mode: UInt8, _ a: UInt8, _ b: UInt8) -> [Range<Int>] {
        switch mode {
        case 0: // one split point anywhere
            let point = (Int(a) << 8 | Int(b)) % (count + 1)
            return [0..<point, point..<count]
        case 1: // two split points
            let first = Int(a) * count / 255, second = Int(b) * count / 255
            let (low, high) = (min(first, second), max(first, second))
            return [0..<low, low..<high, high..<count]
        case 2: // fixed-size chunks of 1...32 bytes
            let size = Int(a % 32) + 1
            return stride(from: 0, to: count, by: size).map { $0..<min($0 + size, count) }
        default: // byte at a time
            return (0..<count).map { $0..<($0 + 1) }
        }
    }
}

extension Substring {
    fileprivate func trimmingSpacesAndTabs() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 3 else { return 0 }
    let config = data[0], a = data[1], b = data[2]
    let stream = Array(UnsafeBufferPointer(start: data + 3, count: size - 3))
    let limits = HTTPParserFuzz.limitChoices[Int(config & 3)]

    let whole = HTTPParserFuzz.run(stream, pieces: [0..<stream.count], limits: limits)
    let split = HTTPParserFuzz.run(
        stream, pieces: HTTPParserFuzz.pieces(count: stream.count, mode: (config >> 2) & 3, a, b), limits: limits)
    HTTPParserFuzz.check(whole == split, """
        results depend on how the bytes are split: \(whole.requests.count) requests then \
        \(whole.error.map { "\($0)" } ?? "no error") in one piece, \(split.requests.count) requests then \
        \(split.error.map { "\($0)" } ?? "no error") in pieces
        """)
    return 0
}

import Testing
@testable import ParlorCodec
import ParlorProtocol

@Suite struct HTTPRequestParserErrorTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var raw: String
        var status: Int
        var code: String
        var testDescription: String { name }
    }

    static let host = "Host: h\r\n"

    static let cases: [Case] = [
        // Framing: Content-Length.
        Case(name: "duplicate equal Content-Length", raw: "POST / HTTP/1.1\r\n\(host)Content-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
             status: 400, code: "http:error:invalid-content-length"),
        Case(name: "Content-Length list", raw: "POST / HTTP/1.1\r\n\(host)Content-Length: 3, 3\r\n\r\nabc",
             status: 400, code: "http:error:invalid-content-length"),
        Case(name: "Content-Length not a number", raw: "POST / HTTP/1.1\r\n\(host)Content-Length: abc\r\n\r\n",
             status: 400, code: "http:error:invalid-content-length"),
        Case(name: "negative Content-Length", raw: "POST / HTTP/1.1\r\n\(host)Content-Length: -1\r\n\r\n",
             status: 400, code: "http:error:invalid-content-length"),
        Case(name: "signed Content-Length", raw: "POST / HTTP/1.1\r\n\(host)Content-Length: +1\r\n\r\nx",
             status: 400, code: "http:error:invalid-content-length"),
        Case(name: "Content-Length over limit (head only)", raw: "POST / HTTP/1.1\r\n\(host)Content-Length: 65537\r\n\r\n",
             status: 413, code: "http:error:body-too-large"),
        Case(name: "enormous Content-Length", raw: "POST / HTTP/1.1\r\n\(host)Content-Length: 99999999999999999999999\r\n\r\n",
             status: 413, code: "http:error:body-too-large"),
        // Framing: Transfer-Encoding.
        Case(name: "Transfer-Encoding with Content-Length",
             raw: "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
             status: 400, code: "http:error:malformed-request"),
        Case(name: "gzip transfer-coding", raw: "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: gzip\r\n\r\n",
             status: 501, code: "http:error:unsupported-transfer-encoding"),
        Case(name: "gzip then chunked", raw: "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: gzip, chunked\r\n\r\n",
             status: 501, code: "http:error:unsupported-transfer-encoding"),
        Case(name: "chunk size not hex", raw: "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\nzz\r\n",
             status: 400, code: "http:error:invalid-chunk"),
        Case(name: "chunk size with junk", raw: "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n5 x\r\n",
             status: 400, code: "http:error:invalid-chunk"),
        Case(name: "chunk data longer than its size",
             raw: "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",
             status: 400, code: "http:error:invalid-chunk"),
        Case(name: "chunk data followed by CR without LF",
             raw: "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n2\r\nab\rX",
             status: 400, code: "http:error:invalid-chunk"),
        Case(name: "chunks add up over limit",
             raw: "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n8000\r\n" + String(repeating: "a", count: 0x8000)
                + "\r\n8001\r\n",
             status: 413, code: "http:error:body-too-large"),
        Case(name: "huge chunk size", raw: "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFFFFFF\r\n",
             status: 413, code: "http:error:body-too-large"),
        // Version and Host.
        Case(name: "HTTP/2.0", raw: "GET / HTTP/2.0\r\n\(host)\r\n", status: 505, code: "http:error:version-not-supported"),
        Case(name: "HTTP/1.2", raw: "GET / HTTP/1.2\r\n\(host)\r\n", status: 505, code: "http:error:version-not-supported"),
        Case(name: "garbage version", raw: "GET / HTTP/one\r\n\(host)\r\n", status: 400, code: "http:error:malformed-request"),
        Case(name: "lowercase protocol", raw: "GET / http/1.1\r\n\(host)\r\n", status: 400, code: "http:error:malformed-request"),
        Case(name: "missing Host", raw: "GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", status: 400, code: "http:error:missing-host"),
        Case(name: "two Hosts", raw: "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", status: 400, code: "http:error:malformed-request"),
        // Malformed request line.
        Case(name: "no version", raw: "GET /\r\n\(host)\r\n", status: 400, code: "http:error:malformed-request"),
        Case(name: "double space", raw: "GET  / HTTP/1.1\r\n\(host)\r\n", status: 400, code: "http:error:malformed-request"),
        Case(name: "method not a token", raw: "G(T / HTTP/1.1\r\n\(host)\r\n", status: 400, code: "http:error:malformed-request"),
        Case(name: "absolute-form target", raw: "GET http://h/ HTTP/1.1\r\n\(host)\r\n", status: 400, code: "http:error:malformed-request"),
        Case(name: "asterisk with GET", raw: "GET * HTTP/1.1\r\n\(host)\r\n", status: 400, code: "http:error:malformed-request"),
        Case(name: "bad percent-escape", raw: "GET /a%zz HTTP/1.1\r\n\(host)\r\n", status: 400, code: "http:error:malformed-request"),
        Case(name: "truncated percent-escape", raw: "GET /a?x=%4 HTTP/1.1\r\n\(host)\r\n", status: 400, code: "http:error:malformed-request"),
        Case(name: "escape decodes to invalid UTF-8", raw: "GET /%FF HTTP/1.1\r\n\(host)\r\n", status: 400, code: "http:error:malformed-request"),
        // Malformed headers.
        Case(name: "space before colon", raw: "GET / HTTP/1.1\r\nHost : h\r\n\r\n", status: 400, code: "http:error:malformed-request"),
        Case(name: "obs-fold", raw: "GET / HTTP/1.1\r\n\(host)X-A: 1\r\n  continued\r\n\r\n", status: 400, code: "http:error:malformed-request"),
        Case(name: "no colon", raw: "GET / HTTP/1.1\r\n\(host)NoColonHere\r\n\r\n", status: 400, code: "http:error:malformed-request"),
        Case(name: "empty name", raw: "GET / HTTP/1.1\r\n\(host): x\r\n\r\n", status: 400, code: "http:error:malformed-request"),
        Case(name: "control character in value", raw: "GET / HTTP/1.1\r\n\(host)X-A: a\u{1}b\r\n\r\n", status: 400, code: "http:error:malformed-request"),
        Case(name: "bare CR in value", raw: "GET / HTTP/1.1\r\n\(host)X-A: a\rb\r\n\r\n", status: 400, code: "http:error:malformed-request"),
    ]

    @Test(arguments: cases)
    func rejects(_ testCase: Case) {
        let error = parseError(testCase.raw)
        #expect(error?.status == testCase.status)
        #expect(error?.code == testCase.code)
        #expect(error?.detail.isEmpty == false)
    }

    @Test func unterminatedLongRequestLineFailsAsSoonAsLimitIsCrossed() {
        let limits = HTTPParserLimits(maxHeaderBytes: 100)
        var parser = HTTPRequestParser(limits: limits)
        parser.append([UInt8]("GET /" + String(repeating: "a", count: 95)))  // exactly 100 bytes, no line end yet
        #expect(throws: Never.self) { try parser.next() }
        parser.append([UInt8]("a"))
        #expect(throws: HTTPParseError.headerTooLarge(limit: 100)) { try parser.next() }
        #expect(parser.errorStatus() == 431)
    }

    @Test func headerBytesOverLimitAcrossLines() {
        let limits = HTTPParserLimits(maxHeaderBytes: 64)
        let raw = "GET / HTTP/1.1\r\nHost: h\r\nX-Long: " + String(repeating: "v", count: 40) + "\r\n"
        let error = parseError(raw, limits: limits)  // no empty line: detected before the head ends
        #expect(error?.status == 431)
        #expect(error?.code == "http:error:header-too-large")
    }

    @Test func defaultHeaderLimitIs16KiB() {
        let big = "GET / HTTP/1.1\r\nHost: h\r\nX-Big: " + String(repeating: "b", count: 17 * 1024)
        #expect(parseError(big)?.code == "http:error:header-too-large")
        let fine = "GET / HTTP/1.1\r\nHost: h\r\nX-Big: " + String(repeating: "b", count: 15 * 1024) + "\r\n\r\n"
        #expect(parseError(fine) == nil)
    }

    @Test func tooManyHeadersFailsBeforeTheHeadEnds() {
        var raw = "GET / HTTP/1.1\r\nHost: h\r\n"
        for index in 0..<99 { raw += "X-\(index): v\r\n" }
        #expect(parseError(raw + "\r\n") == nil)  // exactly 100 headers is fine
        raw += "X-Last: v\r\n"
        let error = parseError(raw)
        #expect(error?.status == 431)
        #expect(error?.code == "http:error:too-many-headers")
    }

    @Test func trailersCountAgainstTheHeaderLimit() {
        let limits = HTTPParserLimits(maxHeaderBytes: 100)
        let raw = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: "
            + String(repeating: "t", count: 120)
        #expect(parseError(raw, limits: limits)?.status == 431)
    }

    @Test func parserStaysDeadAfterAnError() {
        var parser = HTTPRequestParser()
        parser.append([UInt8]("GET / HTTP/9.9\r\nHost: h\r\n\r\n"))
        #expect(throws: HTTPParseError.self) { try parser.next() }
        parser.append([UInt8]("GET / HTTP/1.1\r\nHost: h\r\n\r\n"))
        #expect(parser.errorStatus() == 505)
    }

    @Test func bodyLimitIsInclusive() throws {
        let limits = HTTPParserLimits(maxBodyBytes: 4)
        let ok = try parseAll("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nabcd", limits: limits)
        #expect(ok.first?.body.count == 4)
        #expect(parseError("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n", limits: limits)?.status == 413)
        let chunked = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n3\r\n"
        #expect(parseError(chunked, limits: limits)?.code == "http:error:body-too-large")
    }
}

extension HTTPRequestParser {
    /// The status of the error `next()` throws now, or nil if it does not throw.
    mutating func errorStatus() -> Int? {
        do throws(HTTPParseError) {
            _ = try next()
            return nil
        } catch {
            return error.status
        }
    }
}

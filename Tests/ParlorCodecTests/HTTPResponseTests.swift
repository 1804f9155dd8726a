import Testing
@testable import ParlorCodec

@Suite struct HTTPResponseTests {
    @Test func serializesStatusLineHeadersAndBody() {
        let response = HTTPResponse(status: 201, headers: ["Content-Type": "text/plain", "Content-Length": "5"],
                                    body: [UInt8]("hello"))
        let expected = "HTTP/1.1 201 Created\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello"
        #expect(response.serialized() == [UInt8](expected))
    }

    @Test func headResponseOmitsTheBody() {
        let response = HTTPResponse(status: 200, headers: ["Content-Length": "5"], body: [UInt8]("hello"))
        #expect(response.serialized(headOnly: true) == [UInt8]("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"))
    }

    @Test func headerValuesCannotInjectLines() {
        let response = HTTPResponse(status: 302, headers: ["Location": "/x\r\nSet-Cookie: evil=1"])
        let text = String(decoding: response.serialized(), as: UTF8.self)
        #expect(text == "HTTP/1.1 302 Found\r\nLocation: /x  Set-Cookie: evil=1\r\n\r\n")
    }

    @Test(arguments: [
        (101, "Switching Protocols"), (204, "No Content"), (404, "Not Found"), (413, "Content Too Large"),
        (431, "Request Header Fields Too Large"), (505, "HTTP Version Not Supported"), (599, "Server Error"),
    ])
    func reasonPhrases(status: Int, phrase: String) {
        #expect(HTTPResponse.reasonPhrase(status) == phrase)
    }

    @Test(arguments: [
        (784_111_777, "Sun, 06 Nov 1994 08:49:37 GMT"),
        (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
        (-1, "Wed, 31 Dec 1969 23:59:59 GMT"),
        (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"),
        (253_402_300_799, "Fri, 31 Dec 9999 23:59:59 GMT"),
    ])
    func httpDate(seconds: Int, expected: String) {
        #expect(HTTPDate.format(secondsSince1970: seconds) == expected)
    }
}

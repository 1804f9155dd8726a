import Testing
@testable import ParlorCodec

@Suite struct HTTPRequestParserTests {
    @Test func byteAtATimeRequestWithBody() throws {
        let raw = "POST /rooms/42/messages?draft=1 HTTP/1.1\r\nHost: example.com\r\n"
            + "Content-Type: text/plain\r\nContent-Length: 11\r\n\r\nhello world"
        var parser = HTTPRequestParser()
        #expect(!parser.isInsideHead)
        let bytes = [UInt8](raw)
        let headEnd = bytes.count - 11
        var result: HTTPRequest?
        for (index, byte) in bytes.enumerated() {
            parser.append([byte])
            let request = try parser.next()
            if index < bytes.count - 1 {
                #expect(request == nil, "request completed early at byte \(index)")
                #expect(parser.isInsideHead == (index < headEnd - 1), "isInsideHead wrong at byte \(index)")
            } else {
                result = request
            }
        }
        let request = try #require(result)
        #expect(request.head.method == "POST")
        #expect(request.head.target == "/rooms/42/messages?draft=1")
        #expect(request.head.path == "/rooms/42/messages")
        #expect(request.head.query == ["draft": "1"])
        #expect(request.head.versionMinor == 1)
        #expect(request.head.headers["content-type"] == "text/plain")
        #expect(request.head.headers.count == 3)
        #expect(request.body == [UInt8]("hello world"))
        #expect(!parser.isInsideHead)
        #expect(try parser.next() == nil)
    }

    @Test func pipelinedRequestsComeOutInOrder() throws {
        let raw = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n"
            + "POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nxyz"
            + "DELETE /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"
            + "GET /d HTTP/1.1\r\nHo"
        var parser = HTTPRequestParser()
        parser.append([UInt8](raw))
        let first = try #require(try parser.next())
        let second = try #require(try parser.next())
        let third = try #require(try parser.next())
        #expect(try parser.next() == nil)
        #expect(parser.isInsideHead)
        #expect([first.head.path, second.head.path, third.head.path] == ["/a", "/b", "/c"])
        #expect(first.body.isEmpty)
        #expect(second.body == [UInt8]("xyz"))
        #expect(third.body == [UInt8]("hi"))
        parser.append([UInt8]("st: h\r\n\r\n"))
        #expect(try parser.next()?.head.path == "/d")
    }

    @Test(arguments: [
        ("HTTP/1.1", nil, true),
        ("HTTP/1.1", "close", false),
        ("HTTP/1.1", "Keep-Alive, Close", false),
        ("HTTP/1.1", "upgrade", true),
        ("HTTP/1.0", nil, false),
        ("HTTP/1.0", "keep-alive", true),
        ("HTTP/1.0", "Keep-Alive", true),
        ("HTTP/1.0", "close", false),
    ] as [(String, String?, Bool)])
    func keepAliveRules(version: String, connection: String?, expected: Bool) throws {
        let connectionLine = connection.map { "Connection: \($0)\r\n" } ?? ""
        let requests = try parseAll("GET / \(version)\r\nHost: h\r\n\(connectionLine)\r\n")
        #expect(requests.count == 1)
        #expect(requests.first?.head.keepAlive == expected)
    }

    @Test func queryAndPathDecoding() throws {
        let requests = try parseAll(
            "GET /rooms%20x/a+b?page_size=10&q=a+b%26c&q=last&flag&caf%C3%A9=%E2%82%AC HTTP/1.1\r\nHost: h\r\n\r\n")
        let head = try #require(requests.first).head
        #expect(head.path == "/rooms x/a+b")
        #expect(head.query == ["page_size": "10", "q": "last", "flag": "", "café": "€"])
        #expect(head.target == "/rooms%20x/a+b?page_size=10&q=a+b%26c&q=last&flag&caf%C3%A9=%E2%82%AC")
    }

    @Test func plusDecodesToSpaceInQueryValues() throws {
        let head = try #require(try parseAll("GET /s?q=a+b%2Bc HTTP/1.1\r\nHost: h\r\n\r\n").first).head
        #expect(head.query["q"] == "a b+c")
    }

    @Test func takeRemainingBytesReturnsBytesAfterUpgradeRequest() throws {
        let frameBytes: [UInt8] = [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F]
        var parser = HTTPRequestParser()
        parser.append([UInt8]("GET /ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n") + frameBytes)
        let request = try #require(try parser.next())
        #expect(request.head.headers.tokens("connection") == ["upgrade"])
        #expect(parser.takeRemainingBytes() == frameBytes)
        #expect(parser.takeRemainingBytes().isEmpty)
        #expect(try parser.next() == nil)
        #expect(!parser.isInsideHead)
    }

    @Test func chunkedBodyIsDecoded() throws {
        let raw = "POST /upload HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5;name=value\r\nhello\r\nA \r\n, chunked!\r\n0\r\nX-Trailer: ignored\r\n\r\n"
        let requests = try parseAll(raw)
        #expect(requests.count == 1)
        #expect(requests.first?.body == [UInt8]("hello, chunked!"))
    }

    @Test func chunkedBodyByteAtATime() throws {
        let raw = "POST /upload HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n"
            + "3\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\n\r\nGET /next HTTP/1.1\r\nHost: h\r\n\r\n"
        var parser = HTTPRequestParser()
        var requests: [HTTPRequest] = []
        for byte in [UInt8](raw) {
            parser.append([byte])
            while let request = try parser.next() {
                requests.append(request)
            }
        }
        #expect(requests.map(\.head.path) == ["/upload", "/next"])
        #expect(requests.first?.body == [UInt8]("abc0123456789abcdef"))
    }

    @Test func headersKeepOrderAndCompareCaseInsensitively() throws {
        let raw = "GET / HTTP/1.1\r\nHost: h\r\nX-Multi: one\r\nx-multi:two  \r\nUpgrade:\tWebSocket , h2c\r\n\r\n"
        let headers = try #require(try parseAll(raw).first).head.headers
        #expect(headers.values("X-MULTI") == ["one", "two"])
        #expect(headers["x-multi"] == "one")
        #expect(headers.tokens("upgrade") == ["websocket", "h2c"])
        #expect(headers.contains("HOST"))
        #expect(!headers.contains("Content-Length"))
        #expect(headers.map(\.name) == ["Host", "X-Multi", "x-multi", "Upgrade"])
    }

    @Test func headersReplaceOrAdd() {
        var headers: HTTPHeaders = ["A": "1", "b": "2"]
        headers.add("a", "3")
        headers.replaceOrAdd("A", "4")
        headers.replaceOrAdd("C", "5")
        #expect(headers.map(\.value) == ["4", "2", "5"])
        #expect(headers.count == 3)
    }

    @Test func optionsAsteriskAndHTTP10WithoutHost() throws {
        let options = try #require(try parseAll("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n").first)
        #expect(options.head.target == "*")
        let old = try #require(try parseAll("GET /old HTTP/1.0\r\n\r\n").first)
        #expect(old.head.versionMinor == 0)
        #expect(!old.head.keepAlive)
    }

    @Test func leadingEmptyLinesAndBareLineFeedsAreTolerated() throws {
        let requests = try parseAll("\r\nGET /x HTTP/1.1\nHost: h\nContent-Length: 2\n\nok")
        #expect(requests.first?.head.path == "/x")
        #expect(requests.first?.body == [UInt8]("ok"))
    }
}

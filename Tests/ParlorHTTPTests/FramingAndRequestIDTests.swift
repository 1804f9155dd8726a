import ParlorCodec
import ParlorHTTP
import ParlorProtocol
import Testing

/// The headers every answer gets, and request ids (`RequestIDMiddleware`).
@Suite struct FramingAndRequestIDTests {
    let pipeline = HTTPPipeline(middleware: [RequestIDMiddleware()], router: testRouter())

    @Test func everyAnswerHasDateAndContentLength() throws {
        let response = try pipeline.answer(request("GET", "/rooms"))
        #expect(response.values("Date").count == 1 && response.headers["Date"]?.hasSuffix(" GMT") == true)
        #expect(response.headers["Content-Length"] == String(response.body.count))
    }

    @Test func aBodyWithoutContentTypeIsJSONAndNoBodyIsPlainText() throws {
        #expect(try pipeline.answer(request("GET", "/rooms")).headers["Content-Type"] == "application/json; charset=utf-8")
        #expect(try pipeline.answer(request("DELETE", "/rooms/r1")).headers["Content-Type"] == "text/plain")
    }

    @Test func aRoutesOwnContentTypeIsKept() throws {
        let router = Router { routes in
            routes.get("/page") { _, _ in .response(HTTPResponse(status: 200, headers: ["Content-Type": "text/html"], body: [0x3C])) }
        }
        let response = try HTTPPipeline(middleware: [], router: router).answer(request("GET", "/page"))
        #expect(response.values("Content-Type") == ["text/html"])
    }

    @Test func headersTheServerOwnsReplaceARoutesOwn() throws {
        let router = Router { routes in
            routes.get("/odd") { _, _ in
                .response(HTTPResponse(status: 200, headers: ["Link": "<x>", "X-Request-Id": "mine", "Content-Length": "99"], body: [0x31]))
            }
        }
        let response = try HTTPPipeline(middleware: [RequestIDMiddleware()], router: router)
            .answer(request("GET", "/odd", headers: [("Host", "h"), ("X-Request-Id", "theirs")]))
        #expect(response.values("X-Request-Id") == ["theirs"])
        #expect(response.values("Content-Length") == ["1"])
        #expect(response.headers["Link"] == "<x>")
    }

    @Test func onlyAnAnswerThatEndsTheConnectionSaysConnectionClose() throws {
        #expect(try pipeline.answer(request("GET", "/rooms")).headers["Connection"] == nil)
        #expect(try pipeline.answer(request("GET", "/rooms", version: "1.0")).headers["Connection"] == "close")
        #expect(try pipeline.answer(request("GET", "/rooms", headers: [("Host", "h"), ("Connection", "close")])).headers["Connection"] == "close")
    }

    @Test(arguments: ["abc", "proxy-1234", "a.b_c:d-E", String(repeating: "x", count: 64)])
    func aSafeIncomingIDIsKept(id: String) throws {
        let response = try pipeline.answer(request("GET", "/whoami", headers: [("Host", "h"), ("X-Request-Id", id)]))
        #expect(response.headers["X-Request-Id"] == id)
        #expect(try response.json()["request_id"] == .string(id), "the route sees the same id")
    }

    @Test(arguments: ["has space", "quote\"d", String(repeating: "x", count: 65), "é", "semi;colon"])
    func anUnsafeIncomingIDIsReplaced(id: String) throws {
        let response = try pipeline.answer(request("GET", "/rooms", headers: [("Host", "h"), ("X-Request-Id", id)]))
        let given = try #require(response.headers["X-Request-Id"])
        #expect(given != id && given.count > 17 && given.contains("-"))
    }

    @Test func generatedIDsDifferPerRequestAndReachTheRoute() throws {
        let first = try pipeline.answer(request("GET", "/whoami"))
        let second = try pipeline.answer(request("GET", "/whoami"))
        #expect(first.headers["X-Request-Id"] != second.headers["X-Request-Id"])
        #expect(try first.json()["request_id"] == first.headers["X-Request-Id"].map(JSONValue.string))
    }

    @Test func aJSONErrorBodyCarriesTheID() throws {
        let response = try pipeline.answer(request("GET", "/nowhere", headers: [("Host", "h"), ("X-Request-Id", "r-1")]))
        #expect(try response.json()["request_id"] == .string("r-1"))
        #expect(response.headers["Content-Length"] == String(response.body.count))
    }

    @Test func aSuccessBodyIsLeftAlone() throws {
        let response = try pipeline.answer(request("GET", "/rooms", headers: [("Host", "h"), ("X-Request-Id", "r-1")]))
        #expect(try response.json()["request_id"] == nil)
    }

    @Test func anErrorBodyThatIsNotParlorsJSONIsLeftAlone() throws {
        let router = Router { routes in routes.get("/x") { _, _ in .response(HTTPResponse(status: 503, body: Array("down".utf8))) } }
        let response = try HTTPPipeline(middleware: [RequestIDMiddleware()], router: router).answer(request("GET", "/x"))
        #expect(response.text == "down")
    }

    @Test func anAnswerGivenBeforeTheIDMiddlewareRanStillGetsTheRequestsID() throws {
        let trail = Trail()
        let pipeline = HTTPPipeline(middleware: [Recording(name: "gate", trail: trail, refuses: true), RequestIDMiddleware()],
                                    router: testRouter())
        let response = try pipeline.answer(request("GET", "/rooms", headers: [("Host", "h"), ("X-Request-Id", "early")]))
        #expect(response.status == 418 && response.headers["X-Request-Id"] == "early")
    }

    @Test func withoutTheMiddlewareThereIsNoID() throws {
        let response = try HTTPPipeline(middleware: [], router: testRouter()).answer(request("GET", "/nowhere"))
        #expect(response.headers["X-Request-Id"] == nil)
        #expect(try response.json()["request_id"] == nil)
    }
}

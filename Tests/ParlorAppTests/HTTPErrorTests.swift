import Foundation
import Testing
import ParlorApp

/// Every HTTP error the server can answer, sent through the raw-socket client: status, JSON problem body,
/// mandatory headers, and whether the connection survives.
@Suite struct HTTPErrorTests {
    static let host = "Host: 127.0.0.1\r\n"

    /// Sends `request`, expects the problem `status`/`code`, then expects the server to close the connection.
    @discardableResult
    func expectFatal(_ app: ParlorApplication, _ request: String, _ status: Int, _ code: String,
                     sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let (response, connection) = try rawRequest(app, request)
        let detail = expectProblem(response, status, code, sourceLocation: sourceLocation)
        #expect(response.header("Connection") == "close", sourceLocation: sourceLocation)
        #expect(try connection.waitForClose(), "the connection must close after \(status)", sourceLocation: sourceLocation)
        return detail
    }

    // MARK: 431

    @Test func requestLineOver16KiBIs431() throws {
        try withServer { app in
            let path = "/" + String(repeating: "a", count: 17 * 1024)
            try expectFatal(app, "GET \(path) HTTP/1.1\r\n\(Self.host)\r\n", 431, "http:error:header-too-large")
        }
    }

    @Test func headerValueOver16KiBIs431() throws {
        try withServer { app in
            let big = String(repeating: "b", count: 17 * 1024)
            try expectFatal(app, "GET /healthz HTTP/1.1\r\n\(Self.host)X-Big: \(big)\r\n\r\n", 431, "http:error:header-too-large")
        }
    }

    @Test func manySmallHeadersOver16KiBIs431() throws {
        try withServer { app in
            let headers = (0..<90).map { "X-Pad-\($0): \(String(repeating: "p", count: 200))\r\n" }.joined()
            try expectFatal(app, "GET /healthz HTTP/1.1\r\n\(Self.host)\(headers)\r\n", 431, "http:error:header-too-large")
        }
    }

    @Test func moreThan100HeadersIs431() throws {
        try withServer { app in
            let headers = (0..<100).map { "X-H\($0): v\r\n" }.joined()
            try expectFatal(app, "GET /healthz HTTP/1.1\r\n\(Self.host)\(headers)\r\n", 431, "http:error:too-many-headers")
        }
    }

    @Test func exactly100HeadersAreAccepted() throws {
        try withServer { app in
            let headers = (0..<99).map { "X-H\($0): v\r\n" }.joined()
            let (response, _) = try rawRequest(app, "GET /healthz HTTP/1.1\r\n\(Self.host)\(headers)\r\n")
            #expect(response.status == 200)
        }
    }

    // MARK: 413

    @Test func declaredBodyOver64KiBIs413() throws {
        try withServer { app in
            let head = "POST /auth HTTP/1.1\r\n\(Self.host)Content-Type: application/json\r\nContent-Length: 65537\r\n\r\n"
            try expectFatal(app, head, 413, "http:error:body-too-large")
        }
    }

    @Test func sentBodyOver64KiBIs413AndTheResponseIsReadable() throws {
        try withServer { app in
            let body = #"{"name":"alice","pad":""# + String(repeating: "x", count: 70_000) + #""}"#
            let request = "POST /auth HTTP/1.1\r\n\(Self.host)Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            try expectFatal(app, request, 413, "http:error:body-too-large")
        }
    }

    @Test func chunkedBodyOver64KiBIs413() throws {
        try withServer { app in
            let chunk = String(repeating: "x", count: 0x8000)
            let body = "8000\r\n\(chunk)\r\n8000\r\n\(chunk)\r\n1\r\nx\r\n0\r\n\r\n"
            try expectFatal(app, "POST /auth HTTP/1.1\r\n\(Self.host)Transfer-Encoding: chunked\r\n\r\n\(body)", 413, "http:error:body-too-large")
        }
    }

    @Test func bodyOfExactly64KiBIsAccepted() throws {
        try withServer { app in
            let prefix = #"{"name":"alice","pad":""#, suffix = #""}"#
            let body = prefix + String(repeating: "x", count: 65536 - prefix.utf8.count - suffix.utf8.count) + suffix
            #expect(body.utf8.count == 65536)
            let response = try http(app, "POST", "/auth", json: body)
            #expect(response.status == 200)
            #expect(response.object["name"] as? String == "alice")
        }
    }

    // MARK: 400

    @Test(arguments: ["Content-Length: 2\r\nContent-Length: 2\r\n", "Content-Length: 2\r\ncontent-length: 3\r\n",
                      "Content-Length: 2, 2\r\n", "Content-Length: abc\r\n", "Content-Length: -1\r\n",
                      "Content-Length: +2\r\n", "Content-Length: 0x2\r\n", "Content-Length:\r\n"])
    func badContentLengthIs400(_ header: String) throws {
        try withServer { app in
            let request = "POST /auth HTTP/1.1\r\n\(Self.host)Content-Type: application/json\r\n\(header)\r\n{}"
            try expectFatal(app, request, 400, "http:error:invalid-content-length")
        }
    }

    @Test func contentLengthWithTransferEncodingIs400() throws {
        try withServer { app in
            let request = "POST /auth HTTP/1.1\r\n\(Self.host)Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
            try expectFatal(app, request, 400, "http:error:malformed-request")
        }
    }

    @Test(arguments: ["GARBAGE\r\n\r\n", "GET /healthz\r\n\r\n", "GET  /healthz HTTP/1.1\r\n\r\n", "GET healthz HTTP/1.1\r\n\r\n",
                      "GET /healthz HTTP/1.1 extra\r\n\r\n", "G(T /healthz HTTP/1.1\r\n\r\n", "GET /healthz HTTX/1.1\r\n\r\n",
                      "GET /he\u{1}lthz HTTP/1.1\r\n\r\n"])
    func malformedRequestLineIs400ThenClose(_ line: String) throws {
        try withServer { app in
            _ = try expectFatal(app, line, 400, "http:error:malformed-request")
        }
    }

    @Test func requestsPipelinedAfterAMalformedOneAreNotServed() throws {
        try withServer { app in
            let connection = try RawConnection(port: app.port)
            try connection.send("GARBAGE\r\n\r\nGET /healthz HTTP/1.1\r\n\(Self.host)\r\n")
            expectProblem(try connection.readResponse(), 400, "http:error:malformed-request")
            #expect(try connection.waitForClose())
        }
    }

    @Test func malformedHeadersAre400() throws {
        try withServer { app in
            for header in ["NoColon\r\n", " folded: x\r\n", "Bad Name: x\r\n", "Name : x\r\n", ": empty\r\n", "X: a\u{7}b\r\n"] {
                try expectFatal(app, "GET /healthz HTTP/1.1\r\n\(Self.host)\(header)\r\n", 400, "http:error:malformed-request")
            }
        }
    }

    @Test func missingOrDuplicateHostIs400() throws {
        try withServer { app in
            try expectFatal(app, "GET /healthz HTTP/1.1\r\n\r\n", 400, "http:error:missing-host")
            try expectFatal(app, "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "http:error:malformed-request")
            let (response, _) = try rawRequest(app, "GET /healthz HTTP/1.0\r\n\r\n")
            #expect(response.status == 200, "HTTP/1.0 needs no Host")
        }
    }

    @Test func badChunkedBodyIs400() throws {
        try withServer { app in
            try expectFatal(app, "POST /auth HTTP/1.1\r\n\(Self.host)Transfer-Encoding: chunked\r\n\r\nzz\r\n", 400, "http:error:invalid-chunk")
            try expectFatal(app, "POST /auth HTTP/1.1\r\n\(Self.host)Transfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n", 400, "http:error:invalid-chunk")
        }
    }

    @Test func otherFramingAndVersionErrors() throws {
        try withServer { app in
            try expectFatal(app, "POST /auth HTTP/1.1\r\n\(Self.host)Transfer-Encoding: gzip\r\n\r\n", 501, "http:error:unsupported-transfer-encoding")
            try expectFatal(app, "GET /healthz HTTP/2.0\r\n\(Self.host)\r\n", 505, "http:error:version-not-supported")
        }
    }

    // MARK: Routing errors keep the connection

    @Test func knownPathWrongMethodIs405WithAllow() throws {
        try withServer { app in
            let rooms = try routed(app, "DELETE", "/rooms")
            let detail = expectProblem(rooms, 405, "http:error:method-not-allowed")
            #expect(detail.contains("DELETE"))
            let allow = Set((rooms.header("Allow") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            #expect(allow.isSuperset(of: ["GET", "POST", "HEAD", "OPTIONS"]))
            #expect(!allow.contains("DELETE"))

            let auth = try routed(app, "GET", "/auth")
            expectProblem(auth, 405, "http:error:method-not-allowed")
            #expect(auth.header("Allow") == "POST, OPTIONS")

            let room = try routed(app, "PUT", "/rooms/RM-1")
            expectProblem(room, 405, "http:error:method-not-allowed")
            let roomAllow = Set((room.header("Allow") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            #expect(roomAllow.isSuperset(of: ["GET", "HEAD", "OPTIONS"]))
            #expect(!roomAllow.contains("PUT") && !roomAllow.contains("POST"))
        }
    }

    @Test func unknownPathIs404() throws {
        try withServer { app in
            for path in ["/nope", "/rooms/a/b/c", "/authx", "/rooms/a/members/b"] {
                let detail = expectProblem(try routed(app, "GET", path), 404, "http:error:not-found")
                #expect(!detail.isEmpty)
            }
        }
    }

    @Test func routingErrorsKeepTheConnectionAlive() throws {
        try withServer { app in
            let connection = try RawConnection(port: app.port)
            try connection.send("GET /nope HTTP/1.1\r\n\(Self.host)\r\n")
            let notFound = try connection.readResponse()
            expectProblem(notFound, 404, "http:error:not-found")
            #expect(notFound.header("Connection") == nil)
            try connection.send("DELETE /rooms HTTP/1.1\r\n\(Self.host)\r\n")
            expectProblem(try connection.readResponse(), 405, "http:error:method-not-allowed")
            try connection.send("GET /healthz HTTP/1.1\r\n\(Self.host)\r\n")
            #expect(try connection.readResponse().status == 200)
        }
    }

    @Test func applicationErrorsHaveTheSameShape() throws {
        try withServer { app in
            expectProblem(try routed(app, "POST", "/auth", json: "{"), 400, "request:error:invalid-json")
            expectProblem(try routed(app, "GET", "/rooms", token: "x"), 401, "auth:error:invalid-token")
            expectProblem(try routed(app, "GET", "/rooms/none"), 404, "room:error:not-found")
            expectProblem(try routed(app, "GET", "/ws"), 401, "auth:error:missing-token")
        }
    }

    @Test func successfulResponsesHaveTheMandatoryHeaders() throws {
        try withServer { app in
            expectWellFormed(try routed(app, "GET", "/healthz"))
            expectWellFormed(try routed(app, "POST", "/auth", json: #"{"name":"alice"}"#))
            expectWellFormed(try routed(app, "GET", "/rooms"))
            expectWellFormed(try routed(app, "POST", "/rooms", json: #"{"display_name":"x"}"#))
            expectWellFormed(try routed(app, "HEAD", "/rooms"), headOnly: true)
            expectWellFormed(try routed(app, "OPTIONS", "/rooms", headers: ["Origin": "https://example.com"]))
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ParlorApp

/// HTTP/1.1 connection behaviour over real sockets: framing, pipelining, keep-alive, HEAD, chunked bodies, CORS
/// preflight and the header (slowloris) and idle timeouts.
@Suite struct HTTPConnectionTests {
    static let host = "Host: 127.0.0.1\r\n"

    static func authRequest(_ name: String, close: Bool = false) -> String {
        let body = #"{"name":"\#(name)"}"#
        return "POST /auth HTTP/1.1\r\n\(host)\(close ? "Connection: close\r\n" : "")Content-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    // MARK: Framing

    @Test func requestWrittenOneByteAtATime() throws {
        try withServer { app in
            let connection = try RawConnection(port: app.port)
            try connection.sendByteByByte(Array(Self.authRequest("alice").utf8))
            let response = try connection.readResponse()
            #expect(response.status == 200)
            #expect(response.object["name"] as? String == "alice")
            #expect(response.object["jwt"] is String)
        }
    }

    @Test func threePipelinedRequestsAreAnsweredInOrder() throws {
        try withServer { app in
            let connection = try RawConnection(port: app.port)
            try connection.send(Self.authRequest("alice") + "GET /healthz HTTP/1.1\r\n\(Self.host)\r\n" + Self.authRequest("bob", close: true))
            let first = try connection.readResponse()
            let second = try connection.readResponse()
            let third = try connection.readResponse()
            #expect(first.object["name"] as? String == "alice")
            #expect(second.object["status"] as? String == "ok")
            #expect(third.object["name"] as? String == "bob")
            #expect(try connection.waitForClose())
        }
    }

    @Test func pipelinedRequestWaitsForAnAsynchronousOne() throws {
        try withServer { app in
            let connection = try RawConnection(port: app.port)
            let body = #"{"display_name":"Pipelined"}"#
            try connection.send("POST /rooms HTTP/1.1\r\n\(Self.host)Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
                + "GET /rooms HTTP/1.1\r\n\(Self.host)\r\n" + "GET /nope HTTP/1.1\r\n\(Self.host)\r\n")
            let created = try connection.readResponse()
            let listed = try connection.readResponse()
            let missing = try connection.readResponse()
            #expect(created.status == 201)
            let id = try #require(created.object["id"] as? String)
            #expect(listed.status == 200)
            #expect(listed.array.compactMap { $0["id"] as? String } == [id], "the GET runs after the POST it follows")
            #expect(missing.status == 404)
        }
    }

    @Test func keepAliveServesSeveralRequests() throws {
        try withServer { app in
            let connection = try RawConnection(port: app.port)
            for name in ["alice", "bob"] {
                try connection.send(Self.authRequest(name))
                let response = try connection.readResponse()
                #expect(response.status == 200)
                #expect(response.object["name"] as? String == name)
                #expect(response.header("Connection") == nil)
            }
            #expect(connection.buffer.isEmpty)
        }
    }

    @Test func connectionCloseClosesAfterTheResponse() throws {
        try withServer { app in
            let connection = try RawConnection(port: app.port)
            try connection.send(Self.authRequest("alice", close: true))
            let response = try connection.readResponse()
            #expect(response.status == 200)
            #expect(response.header("Connection") == "close")
            #expect(try connection.waitForClose())
        }
    }

    @Test func http10ClosesUnlessKeepAliveIsAsked() throws {
        try withServer { app in
            let plain = try RawConnection(port: app.port)
            try plain.send("GET /healthz HTTP/1.0\r\n\r\n")
            #expect(try plain.readResponse().status == 200)
            #expect(try plain.waitForClose())

            let kept = try RawConnection(port: app.port)
            try kept.send("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            #expect(try kept.readResponse().header("Connection") == nil)
            try kept.send("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            #expect(try kept.readResponse().status == 200)
        }
    }

    @Test func headSendsHeadersButNoBody() throws {
        try withServer { app in
            let connection = try RawConnection(port: app.port)
            try connection.send("HEAD /healthz HTTP/1.1\r\n\(Self.host)\r\n")
            let head = try connection.readResponse(headOnly: true)
            #expect(head.status == 200)
            expectWellFormed(head, headOnly: true)
            let declared = try #require(head.header("Content-Length").flatMap(Int.init))
            #expect(declared > 0, "HEAD announces the GET body's length")
            #expect(connection.buffer.isEmpty, "no body bytes after the head")
            // Anything the server had sent as a body would now be read as the start of the next response.
            try connection.send("GET /healthz HTTP/1.1\r\n\(Self.host)\r\n")
            let get = try connection.readResponse()
            #expect(get.status == 200)
            #expect(get.body.count == declared)
            #expect(get.object["status"] as? String == "ok")
        }
    }

    @Test func chunkedRequestBody() throws {
        try withServer { app in
            let connection = try RawConnection(port: app.port)
            try connection.send("POST /auth HTTP/1.1\r\n\(Self.host)Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5\r\n{\"nam\r\n" + "3;ext=1\r\ne\":\r\n" + "8\r\n\"alice\"}\r\n" + "0\r\nX-Trailer: ignored\r\n\r\n")
            let response = try connection.readResponse()
            #expect(response.status == 200, "\(response.text)")
            #expect(response.object["name"] as? String == "alice")
            try connection.send("GET /healthz HTTP/1.1\r\n\(Self.host)\r\n")
            #expect(try connection.readResponse().status == 200, "framing is intact after a chunked body")
        }
    }

    // MARK: CORS

    @Test func preflightGetsTheCORSHeaders() throws {
        try withServer({ $0.http.corsAllowedOrigins = ["https://example.com"] }) { app in
            let response = try http(app, "OPTIONS", "/rooms", headers: [
                "Origin": "https://example.com", "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type",
            ])
            #expect(response.status == 204)
            #expect(response.body.isEmpty)
            #expect(response.header("Access-Control-Allow-Origin") == "https://example.com")
            let methods = Set((response.header("Access-Control-Allow-Methods") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            #expect(methods.isSuperset(of: ["GET", "POST"]))
            #expect(response.header("Access-Control-Allow-Headers")?.lowercased().contains("authorization") == true)
            #expect(response.header("Allow") != nil)
            expectWellFormed(response)
        }
    }

    @Test func preflightForAnUnknownPathIs404() throws {
        try withServer { app in
            _ = expectProblem(try http(app, "OPTIONS", "/nope", headers: ["Origin": "https://example.com"]), 404, "http:error:not-found")
        }
    }

    @Test func simpleRequestWithOriginGetsAllowOrigin() throws {
        try withServer({ $0.http.corsAllowedOrigins = ["*"] }) { app in
            let response = try http(app, "GET", "/rooms", headers: ["Origin": "https://example.com"])
            #expect(response.header("Access-Control-Allow-Origin") == "*")
            #expect(response.header("Access-Control-Expose-Headers")?.contains("Link") == true)
            #expect(response.header("Access-Control-Expose-Headers")?.contains("X-Request-Id") == true)
            #expect(try http(app, "GET", "/rooms").header("Access-Control-Allow-Origin") == nil, "no Origin, no CORS headers")
        }
    }

    @Test func restrictedOriginsAreEchoedOrRefused() throws {
        try withServer({ $0.http.corsAllowedOrigins = ["https://ok.example"] }) { app in
            let allowed = try http(app, "OPTIONS", "/auth", headers: ["Origin": "https://ok.example"])
            #expect(allowed.header("Access-Control-Allow-Origin") == "https://ok.example")
            #expect(allowed.header("Vary") == "Origin")
            let refused = try http(app, "OPTIONS", "/auth", headers: ["Origin": "https://evil.example"])
            #expect(refused.header("Access-Control-Allow-Origin") == nil)
        }
    }

    // MARK: Timeouts

    @Test func partialHeadIsClosedAfterTheHeaderTimeout() throws {
        try withServer({ $0.http.headerTimeout = .seconds(0.3) }) { app in
            let connection = try RawConnection(port: app.port, timeout: 3)
            let started = Date()
            try connection.send("GET /healthz HTTP/1.1\r\n\(Self.host)X-Slow: ")
            #expect(try connection.waitForClose(), "a head not completed within the header timeout must be dropped")
            let elapsed = Date().timeIntervalSince(started)
            #expect(elapsed >= 0.25 && elapsed < 3)
            #expect(connection.buffer.isEmpty, "no response is sent to a slowloris")
        }
    }

    @Test func tricklingBytesDoesNotExtendTheHeaderTimeout() throws {
        try withServer({ $0.http.headerTimeout = .seconds(0.3) }) { app in
            let connection = try RawConnection(port: app.port, timeout: 3)
            let started = Date()
            var closed = false
            // One byte every 50 ms at most: each wait is for the server's close, which ends the loop at once.
            for byte in Array("GET /healthz HTTP/1.1\r\nX-Slow: \(String(repeating: "z", count: 200))".utf8) {
                guard (try? connection.send([byte])) != nil else { closed = true; break }
                if Self.waitReadable(connection, milliseconds: 50) {
                    closed = try connection.waitForClose()
                    break
                }
            }
            #expect(closed, "the header deadline counts from the first byte, not the last")
            #expect(Date().timeIntervalSince(started) < 3)
        }
    }

    @Test func completeRequestsAreNotCutByTheHeaderTimeout() throws {
        try withServer({ $0.http.headerTimeout = .seconds(0.3) }) { app in
            let connection = try RawConnection(port: app.port, timeout: 3)
            try connection.send("GET /healthz HTTP/1.1\r\n\(Self.host)\r\n")
            #expect(try connection.readResponse().status == 200)
            try connection.send("GET /healthz HTTP/1.1\r\n\(Self.host)\r\n")
            #expect(try connection.readResponse().status == 200)
        }
    }

    @Test func idleKeepAliveConnectionIsClosed() throws {
        try withServer({ $0.http.idleTimeout = .seconds(0.3) }) { app in
            let silent = try RawConnection(port: app.port, timeout: 3)
            #expect(try silent.waitForClose(), "a connection that never sends is closed after the idle timeout")
            let used = try RawConnection(port: app.port, timeout: 3)
            try used.send("GET /healthz HTTP/1.1\r\n\(Self.host)\r\n")
            #expect(try used.readResponse().status == 200)
            #expect(try used.waitForClose(), "an idle keep-alive connection is closed after the idle timeout")
        }
    }

    /// True when the socket becomes readable (data or EOF) within the time given.
    static func waitReadable(_ connection: RawConnection, milliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: connection.fd, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, milliseconds) > 0
    }
}

import Testing
import ParlorApp

/// The app's own middleware chain (`Routes.middleware`), through its pipeline without a socket: each refusal in its
/// place, and what every answer carries. The sockets' side of the same behaviours: OriginTests, DNSRebindingTests,
/// ExpectContinueTests, TrustedProxyTests, LogFormatTests.
@Suite struct AppMiddlewareTests {
    static let upgrade = ["Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
                          "Sec-WebSocket-Version": "13"]

    @Test func refusalsComeInTheChainsOrder() throws {
        try withServer { app in
            var all = Self.upgrade.merging(["Host": "evil.example", "Origin": "https://evil.example", "Expect": "x"]) { $1 }
            expectProblem(try routed(app, "GET", "/ws", headers: all), 417, "http:error:expectation-failed")
            all["Expect"] = nil
            expectProblem(try routed(app, "GET", "/ws", headers: all), 421, "http:error:host-not-allowed")
            all["Host"] = nil
            expectProblem(try routed(app, "GET", "/ws", headers: all), 403, "http:error:origin-not-allowed")
            all["Origin"] = nil
            expectProblem(try routed(app, "GET", "/ws", headers: all), 401, "auth:error:missing-token")
        }
    }

    @Test func everyAnswerCarriesTheRequestID() throws {
        try withServer { app in
            for (method, path) in [("GET", "/healthz"), ("GET", "/nowhere"), ("DELETE", "/rooms"), ("OPTIONS", "/rooms")] {
                let response = try routed(app, method, path, headers: ["X-Request-Id": "app-\(method)"])
                #expect(response.header("X-Request-Id") == "app-\(method)", "\(method) \(path)")
                if response.status >= 400 { #expect(response.object["request_id"] as? String == "app-\(method)") }
            }
        }
    }

    @Test func listedOriginsGetCORSAndPreflightsNameTheMethods() throws {
        try withServer({ $0.http.corsAllowedOrigins = ["https://app.example"] }) { app in
            let preflight = try routed(app, "OPTIONS", "/rooms", headers: ["Origin": "https://app.example"])
            #expect(preflight.status == 204 && preflight.header("Access-Control-Allow-Methods") == "GET, POST, HEAD, OPTIONS")
            #expect(preflight.header("Access-Control-Allow-Origin") == "https://app.example")
            #expect(try routed(app, "GET", "/rooms", headers: ["Origin": "https://other.example"]).header("Access-Control-Allow-Origin") == nil)
            #expect(try routed(app, "GET", "/ws", headers: Self.upgrade.merging(["Origin": "https://app.example"]) { $1 }).status == 401,
                    "a listed origin reaches the route's token check")
        }
    }

    @Test func authIsRateLimitedPerClientAddressBeforeItsRoute() throws {
        try withServer({ $0.authRatePerIP = 1 }) { app in  // a burst of 3
            for index in 0..<3 {
                #expect(try routed(app, "POST", "/auth", json: #"{"name":"u\#(index)"}"#, from: "127.0.0.5").status == 200)
            }
            let limited = try routed(app, "POST", "/auth", json: #"{"name":"u9"}"#, from: "127.0.0.5")
            expectProblem(limited, 429, "auth:error:rate-limited")
            #expect(limited.header("Retry-After").flatMap(Int.init).map { $0 >= 1 } == true)
            #expect(try routed(app, "POST", "/auth", json: "{", from: "127.0.0.5").status == 429, "refused before the body is read")
            #expect(try routed(app, "POST", "/auth", json: #"{"name":"u9"}"#, from: "127.0.0.6").status == 200, "another address")
            #expect(try routed(app, "GET", "/auth", from: "127.0.0.5").status == 405, "only POST /auth counts")
        }
    }
}

import Foundation
import ParlorApp
import ParlorCodec
import Testing

/// Which other sites may use the server from a browser: CORS and the Origin of WebSocket upgrades (issue 17).
@Suite struct OriginTests {
    /// The status of a /ws upgrade request carrying `origin` (none when nil) and Host 127.0.0.1:<port>.
    static func upgradeStatus(_ app: ParlorApplication, origin: String?, host: String? = nil) throws -> TestResponse {
        let connection = try RawConnection(port: app.port)
        let key = Base64.encode((0..<16).map { _ in UInt8.random(in: 0...255) })
        var request = "GET /ws?token=\(try token(app, "visitor")) HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(app.port)")\r\n"
        request += "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        if let origin { request += "Origin: \(origin)\r\n" }
        try connection.send(request + "\r\n")
        return try connection.readResponse()
    }

    @Test func webSocketUpgradesFromOtherOriginsAreRefused() throws {
        try withServer({ $0.http.allowedHosts.insert("parlor.example") }) { app in
            let foreign = try Self.upgradeStatus(app, origin: "https://evil.example")
            #expect(foreign.status == 403)
            #expect(foreign.errorCode == "http:error:origin-not-allowed")
            #expect(foreign.header("Upgrade") == nil)
            #expect(try Self.upgradeStatus(app, origin: "null").status == 403)
            #expect(try Self.upgradeStatus(app, origin: "http://127.0.0.1:\(app.port + 1)").status == 403)
            #expect(try Self.upgradeStatus(app, origin: nil).status == 101, "non-browser clients send no Origin")
            #expect(try Self.upgradeStatus(app, origin: "http://127.0.0.1:\(app.port)").status == 101)
            #expect(try Self.upgradeStatus(app, origin: "HTTPS://Parlor.Example", host: "parlor.example:443").status == 101)
        }
    }

    @Test func configuredOriginsMayUpgradeAndGetCORSHeaders() throws {
        try withServer({ $0.http.corsAllowedOrigins = ["https://app.example"] }) { app in
            #expect(try Self.upgradeStatus(app, origin: "https://app.example").status == 101)
            #expect(try Self.upgradeStatus(app, origin: "https://other.example").status == 403)
            let listed = try http(app, "GET", "/rooms", headers: ["Origin": "https://app.example"])
            #expect(listed.header("Access-Control-Allow-Origin") == "https://app.example")
        }
    }

    @Test func corsIsSameOriginOnlyByDefault() throws {
        try withServer { app in
            let response = try http(app, "GET", "/rooms", headers: ["Origin": "https://example.com"])
            #expect(response.status == 200)
            #expect(response.header("Access-Control-Allow-Origin") == nil)
            let preflight = try http(app, "OPTIONS", "/rooms", headers: ["Origin": "https://example.com", "Access-Control-Request-Method": "POST"])
            #expect(preflight.header("Access-Control-Allow-Origin") == nil)
        }
    }

    @Test func webClientMayNotBeFramedAndConnectsOnlyToItsOwnServer() throws {
        try withServer { app in
            let policy = try http(app, "GET", "/").header("Content-Security-Policy") ?? ""
            #expect(policy.contains("frame-ancestors 'none'"))
            #expect(policy.contains("connect-src 'self'"))
            #expect(!policy.contains("ws:") && !policy.contains("wss:"), "any ws: host was allowed: \(policy)")
        }
    }
}

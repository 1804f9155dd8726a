import Foundation
import ParlorApp
import ParlorCodec
import ParlorHTTP
import Testing

/// Behind a reverse proxy (issue 15): the per-address limits count the forwarded client, but only when the TCP peer
/// is a trusted proxy; same-origin checks use the forwarded scheme and host. Nobody is trusted by default (issue 34),
/// so these tests name loopback, where their client plays the proxy.
@Suite struct TrustedProxyTests {
    static func postAuth(_ app: ParlorApplication, _ name: String, _ headers: [String: String],
                         from source: String = "127.0.0.1") throws -> TestResponse {
        try RawConnection.oneRequest(app.port, "POST", "/auth", json: #"{"name":"\#(name)"}"#, headers: headers, from: source)
    }

    /// Sends /auth until a 429 (at most `limit` tries); returns how many got through.
    static func exhaustAuth(_ app: ParlorApplication, _ headers: [String: String], from source: String = "127.0.0.1",
                            limit: Int = 40) throws -> Int {
        for attempt in 0..<limit {
            let response = try postAuth(app, "u\(attempt)", headers, from: source)
            if response.status == 429 { return attempt }
            #expect(response.status == 200, "\(response.text)")
        }
        return limit
    }

    @Test func authRateCountsEachForwardedAddressBehindATrustedProxy() throws {
        try withServer({ $0.authRatePerIP = 1; $0.http.trustedProxies = .loopback }) { (app) throws in  // burst of 3
            let first = ["X-Forwarded-For": "203.0.113.7"]
            #expect(try Self.exhaustAuth(app, first) == 3)
            #expect(try Self.postAuth(app, "again", first).status == 429)
            // Another client behind the same proxy is unaffected, and so is the proxy's own address.
            #expect(try Self.postAuth(app, "other", ["X-Forwarded-For": "203.0.113.8"]).status == 200)
            #expect(try Self.postAuth(app, "direct", [:]).status == 200)
            // A spoofed left part of the chain does not reset the count: the rightmost untrusted hop is the client.
            #expect(try Self.postAuth(app, "spoof", ["X-Forwarded-For": "1.2.3.4, 203.0.113.7"]).status == 429)
        }
    }

    @Test func spoofedForwardingHeadersFromAnUntrustedPeerChangeNothing() throws {
        // 127.0.0.1 is not a proxy here: every request counts against 127.0.0.1 whatever it claims.
        try withServer({ $0.authRatePerIP = 1; $0.http.trustedProxies = TrustedProxies(list: "10.9.9.9/32")! }) { (app) throws in
            var attempt = 0
            var status = 200
            while status == 200, attempt < 10 {
                attempt += 1
                status = try Self.postAuth(app, "s\(attempt)", ["X-Forwarded-For": "198.51.100.\(attempt)",
                                                                 "Forwarded": "for=198.51.100.\(attempt + 100)"]).status
            }
            #expect(status == 429)
            #expect(attempt == 4, "the burst of 3 from one address, whatever the headers said")
            // A second real source address is a second client.
            #expect(try Self.postAuth(app, "second", [:], from: "127.0.0.2").status == 200)
        }
    }

    @Test func forwardedWinsOverXForwardedForInTheLimits() throws {
        try withServer({ $0.authRatePerIP = 1; $0.http.trustedProxies = .loopback }) { (app) throws in
            #expect(try Self.exhaustAuth(app, ["Forwarded": #"for="[2001:db8::1]:4711""#, "X-Forwarded-For": "198.51.100.1"]) == 3)
            // Same Forwarded client, another X-Forwarded-For: still limited.
            #expect(try Self.postAuth(app, "x", ["Forwarded": "for=\"[2001:db8::1]\"", "X-Forwarded-For": "198.51.100.2"]).status == 429)
            // The X-Forwarded-For address of the limited requests was never counted.
            #expect(try Self.postAuth(app, "y", ["X-Forwarded-For": "198.51.100.1"]).status == 200)
        }
    }

    @Test func connectionCapCountsTheForwardedAddressOnItsFirstRequest() throws {
        try withServer({ $0.http.maxConnectionsPerIP = 2; $0.http.trustedProxies = .loopback }) { (app) throws in
            func openWith(_ client: String?) throws -> (RawConnection, TestResponse) {
                let connection = try RawConnection(port: app.port)
                let forwarded = client.map { "X-Forwarded-For: \($0)\r\n" } ?? ""
                try connection.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\(forwarded)\r\n")
                return (connection, try connection.readResponse())
            }
            // Three connections from the proxy's address: more than 2, but the proxy has a larger cap of its own.
            let a1 = try openWith("203.0.113.7"), a2 = try openWith("203.0.113.7")
            #expect(a1.1.status == 200 && a2.1.status == 200)
            let a3 = try openWith("203.0.113.7")
            #expect(a3.1.status == 429, "\(a3.1.text)")
            #expect(a3.1.errorCode == "http:error:too-many-connections")
            #expect(try a3.0.waitForClose())
            let b = try openWith("203.0.113.8")
            #expect(b.1.status == 200, "another client behind the proxy is unaffected")
            // A local client beside the proxy, with no forwarded address, counts as 127.0.0.1 itself.
            let l1 = try openWith(nil), l2 = try openWith(nil), l3 = try openWith(nil)
            #expect(l1.1.status == 200 && l2.1.status == 200)
            #expect(l3.1.status == 429)
            withExtendedLifetime([a1.0, a2.0, b.0, l1.0, l2.0]) {}
        }
    }

    @Test func webSocketSameOriginUsesTheForwardedSchemeAndHost() throws {
        try withServer({ $0.http.trustedProxies = .loopback; $0.http.allowedHosts.insert("parlor.example") }) { (app) throws in
            func upgrade(origin: String, _ extra: [String: String]) throws -> Int {
                let connection = try RawConnection(port: app.port)
                let key = Base64.encode((0..<16).map { _ in UInt8.random(in: 0...255) })
                var request = "GET /ws?token=\(try token(app, "visitor")) HTTP/1.1\r\nHost: 127.0.0.1:\(app.port)\r\nOrigin: \(origin)\r\n"
                request += "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
                for (name, value) in extra { request += "\(name): \(value)\r\n" }
                try connection.send(request + "\r\n")
                return try connection.readResponse().status
            }
            let proxied = ["X-Forwarded-Proto": "https", "X-Forwarded-Host": "parlor.example", "X-Forwarded-For": "203.0.113.7"]
            #expect(try upgrade(origin: "https://parlor.example", proxied) == 101)
            #expect(try upgrade(origin: "http://parlor.example", proxied) == 403, "the proxy said the page was https")
            #expect(try upgrade(origin: "https://parlor.example", ["Forwarded": "for=203.0.113.7;proto=https;host=parlor.example"]) == 101)
            #expect(try upgrade(origin: "https://127.0.0.1:\(app.port)", proxied) == 403, "the browser's host is the forwarded one")
        }
        try withServer({ $0.http.trustedProxies = .none }) { (app) throws in
            let connection = try RawConnection(port: app.port)
            let key = Base64.encode((0..<16).map { _ in UInt8.random(in: 0...255) })
            try connection.send("GET /ws?token=\(try token(app, "v")) HTTP/1.1\r\nHost: 127.0.0.1:\(app.port)\r\nOrigin: https://parlor.example\r\n"
                                + "X-Forwarded-Host: parlor.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n")
            #expect(try connection.readResponse().status == 403, "an untrusted peer cannot name the host")
        }
    }
}

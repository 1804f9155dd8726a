import Foundation
import ParlorApp
import ParlorCodec
@testable import ParlorClient  // SHA1Digest: the client's SHA-1 (a library's), to check the server's answer
import Testing

/// The opening handshake (RFC 6455 §4.2), and authentication before it.
@Suite struct WebSocketConformanceHandshakeTests {
    /// A 101 with the right headers, and a working socket behind it (session:success, then a pong).
    private func expectUpgraded(_ connection: RawConnection, _ response: TestResponse, key: String = Conformance.sampleKey,
                                _ label: String = "", sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(response.status == 101, "\(label): \(response.status) \(response.text)", sourceLocation: sourceLocation)
        guard response.status == 101 else { return }
        #expect(response.header("Upgrade")?.lowercased() == "websocket", "\(label)", sourceLocation: sourceLocation)
        #expect(response.header("Connection")?.lowercased() == "upgrade", "\(label)", sourceLocation: sourceLocation)
        #expect(response.header("Sec-WebSocket-Accept") == WebSocketHandshake.acceptValue(forKey: key, sha1: SHA1Digest.hash), "\(label)",
                sourceLocation: sourceLocation)
        try connection.send(WebSocketFrameEncoder.frame(.ping, payload: Array("up".utf8), mask: Conformance.mask))
        // session:success comes from the rooms thread, so it may follow the pong.
        let messages = try Conformance.messages(2, on: connection)
        #expect(messages.contains(.pong(Array("up".utf8))), "\(label): \(messages)", sourceLocation: sourceLocation)
        #expect(messages.contains { if case .text(let hello) = $0 { hello.contains(#""session:success""#) } else { false } },
                "\(label): \(messages)", sourceLocation: sourceLocation)
    }

    @Test func acceptValueMatchesTheRFCExample() throws {
        #expect(WebSocketHandshake.acceptValue(forKey: Conformance.sampleKey, sha1: SHA1Digest.hash) == Conformance.sampleAccept)
        try withServer { app in
            let (connection, response) = try Conformance.upgrade(app, token: try token(app, "rfc"), headers: Conformance.upgradeHeaders())
            #expect(response.header("Sec-WebSocket-Accept") == Conformance.sampleAccept)
            try expectUpgraded(connection, response)
        }
    }

    @Test func acceptValueForRandomKeys() throws {
        try withServer { app in
            let jwt = try token(app, "keys")
            for _ in 0..<5 {
                let key = Base64.encode((0..<16).map { _ in UInt8.random(in: 0...255) })
                let (connection, response) = try Conformance.upgrade(app, token: jwt, headers: Conformance.upgradeHeaders(key: key))
                try expectUpgraded(connection, response, key: key, "key \(key)")
            }
        }
    }

    @Test func onlyVersion13IsSpoken() throws {
        try withServer { app in
            let jwt = try token(app, "versions")
            let cases: [(String, [(String, String)])] = [
                ("8", Conformance.upgradeHeaders(version: "8")),
                ("12", Conformance.upgradeHeaders(version: "12")),
                ("14", Conformance.upgradeHeaders(version: "14")),
                ("0", Conformance.upgradeHeaders(version: "0")),
                ("13, 8", Conformance.upgradeHeaders(version: "13, 8")),
                ("013", Conformance.upgradeHeaders(version: "013")),
                ("text", Conformance.upgradeHeaders(version: "thirteen")),
                ("missing", Conformance.upgradeHeaders(version: nil)),
                ("8 then 13", Conformance.upgradeHeaders(version: "8", extra: [("Sec-WebSocket-Version", "13")])),
            ]
            for (label, headers) in cases {
                let (_, response) = try Conformance.upgrade(app, token: jwt, headers: headers)
                #expect(response.status == 426, "version \(label)")
                #expect(response.header("Sec-WebSocket-Version") == "13", "version \(label)")
                #expect(response.header("Sec-WebSocket-Accept") == nil, "version \(label)")
                #expect(response.errorCode == "ws:error:unsupported-version", "version \(label)")
            }
            let (connection, response) = try Conformance.upgrade(app, token: jwt, headers: Conformance.upgradeHeaders(version: "13"))
            try expectUpgraded(connection, response)
        }
    }

    @Test func keyMustBeBase64OfSixteenBytes() throws {
        try withServer { app in
            let jwt = try token(app, "badkeys")
            let cases: [(String, [(String, String)])] = [
                ("not base64", Conformance.upgradeHeaders(key: "not base64 at all!!!!!==")),
                ("15 bytes", Conformance.upgradeHeaders(key: Base64.encode([UInt8](repeating: 7, count: 15)))),
                ("17 bytes", Conformance.upgradeHeaders(key: Base64.encode([UInt8](repeating: 7, count: 17)))),
                ("32 bytes", Conformance.upgradeHeaders(key: Base64.encode([UInt8](repeating: 7, count: 32)))),
                ("unpadded", Conformance.upgradeHeaders(key: "dGhlIHNhbXBsZSBub25jZQ")),
                ("padding inside", Conformance.upgradeHeaders(key: "dGhl=HNhbXBsZSBub25jZQ==")),
                ("url-safe alphabet", Conformance.upgradeHeaders(key: "-_-_-_-_-_-_-_-_-_-_-w==")),
                ("missing", Conformance.upgradeHeaders(key: nil)),
                ("two keys", Conformance.upgradeHeaders(extra: [("Sec-WebSocket-Key", "AAAAAAAAAAAAAAAAAAAAAA==")])),
            ]
            for (label, headers) in cases {
                let (_, response) = try Conformance.upgrade(app, token: jwt, headers: headers)
                #expect(response.status == 400, "key \(label)")
                #expect(response.errorCode == "ws:error:bad-handshake", "key \(label)")
                #expect(response.header("Sec-WebSocket-Accept") == nil, "key \(label)")
            }
        }
    }

    @Test func upgradeAndConnectionAreTokenLists() throws {
        try withServer { app in
            let jwt = try token(app, "tokens")
            let accepted: [(String, [(String, String)])] = [
                ("keep-alive, Upgrade", Conformance.upgradeHeaders(connection: "keep-alive, Upgrade")),
                ("Upgrade, keep-alive", Conformance.upgradeHeaders(connection: "Upgrade, keep-alive")),
                ("no spaces", Conformance.upgradeHeaders(connection: "keep-alive,Upgrade")),
                ("lowercase", Conformance.upgradeHeaders(upgrade: "websocket", connection: "upgrade")),
                ("mixed case", Conformance.upgradeHeaders(upgrade: "WebSocket", connection: "UpGrAdE")),
                ("two Connection lines", Conformance.upgradeHeaders(connection: "keep-alive", extra: [("Connection", "Upgrade")])),
                ("Upgrade list", Conformance.upgradeHeaders(upgrade: "h2c, websocket")),
                ("empty list elements", Conformance.upgradeHeaders(connection: " , Upgrade ,")),
            ]
            for (label, headers) in accepted {
                let (connection, response) = try Conformance.upgrade(app, token: jwt, headers: headers)
                try expectUpgraded(connection, response, label)
            }
            let refused: [(String, [(String, String)])] = [
                ("no Upgrade", Conformance.upgradeHeaders(upgrade: nil)),
                ("no Connection", Conformance.upgradeHeaders(connection: nil)),
                ("Connection: keep-alive", Conformance.upgradeHeaders(connection: "keep-alive")),
                ("Connection: Upgraded", Conformance.upgradeHeaders(connection: "Upgraded")),
                ("Connection: keep-alive Upgrade", Conformance.upgradeHeaders(connection: "keep-alive Upgrade")),
                ("Upgrade: h2c", Conformance.upgradeHeaders(upgrade: "h2c")),
                ("Upgrade: websockets", Conformance.upgradeHeaders(upgrade: "websockets")),
            ]
            for (label, headers) in refused {
                let (_, response) = try Conformance.upgrade(app, token: jwt, headers: headers)
                #expect(response.status == 426, "\(label)")
                #expect(response.errorCode == "ws:error:upgrade-required", "\(label)")
                #expect(response.header("Upgrade")?.lowercased() == "websocket", "\(label)")
                #expect(response.header("Sec-WebSocket-Accept") == nil, "\(label)")
            }
        }
    }

    @Test func upgradeMustBeAnHTTP11Get() throws {
        try withServer { app in
            let jwt = try token(app, "methods")
            let (_, old) = try Conformance.upgrade(app, token: jwt, httpVersion: "HTTP/1.0", headers: Conformance.upgradeHeaders())
            #expect(old.status == 400)
            #expect(old.errorCode == "ws:error:bad-handshake")
            let (_, post) = try Conformance.upgrade(app, token: jwt, method: "POST", headers: Conformance.upgradeHeaders())
            #expect(post.status == 405)
        }
    }

    // MARK: Authentication: 401 before any upgrade

    @Test func missingTokenIs401BeforeAnyUpgrade() throws {
        try withServer { app in
            let (connection, response) = try Conformance.upgrade(
                app, headers: Conformance.upgradeHeaders(extra: [("Connection", "keep-alive")]))
            #expect(response.status == 401)
            #expect(response.errorCode == "auth:error:missing-token")
            #expect(response.header("Content-Type")?.hasPrefix("application/json") == true)
            #expect(response.header("WWW-Authenticate") == "Bearer")
            #expect(response.header("Sec-WebSocket-Accept") == nil)
            #expect(response.header("Upgrade") == nil)
            // Still plain HTTP: the next request on the same connection gets an ordinary response.
            try connection.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let health = try connection.readResponse()
            #expect(health.status == 200)
            #expect(health.object["status"] as? String == "ok")
        }
    }

    @Test func invalidTokensAre401() throws {
        try withServer { app in
            let jwt = try token(app, "tamper")
            let lastIndex = jwt.index(before: jwt.endIndex)
            let tampered = jwt[..<lastIndex] + (jwt[lastIndex] == "A" ? "B" : "A")
            let cases: [(String, String?, [(String, String)])] = [
                ("garbage query", "garbage", []),
                ("tampered signature", String(tampered), []),
                ("empty query", "", []),
                ("garbage bearer", nil, [("Authorization", "Bearer not.a.jwt")]),
                ("Basic scheme", nil, [("Authorization", "Basic YWxpY2U6c2VjcmV0")]),
            ]
            for (label, query, extra) in cases {
                let (_, response) = try Conformance.upgrade(app, token: query, headers: Conformance.upgradeHeaders(extra: extra))
                #expect(response.status == 401, "\(label)")
                #expect(response.errorCode?.hasPrefix("auth:error:") == true, "\(label): \(response.text)")
                #expect(response.header("Sec-WebSocket-Accept") == nil, "\(label)")
            }
        }
    }

    @Test func bearerHeaderWorksAsWellAsTheQuery() throws {
        try withServer { app in
            let jwt = try token(app, "bearer")
            for scheme in ["Bearer", "bearer"] {
                let (connection, response) = try Conformance.upgrade(
                    app, headers: Conformance.upgradeHeaders(extra: [("Authorization", "\(scheme) \(jwt)")]))
                try expectUpgraded(connection, response, "Authorization: \(scheme)")
            }
            let (connection, response) = try Conformance.upgrade(app, token: jwt, headers: Conformance.upgradeHeaders())
            try expectUpgraded(connection, response, "?token=")
        }
    }
}

import Foundation
import Testing
import ParlorApp
import ParlorCodec
import ParlorRooms

/// JWTs: what /auth issues, and every kind of bad token refused by TokenService, GET /rooms and GET /ws.
@Suite struct TokenTests {
    static let secret = AppConfiguration.testing().jwtSecret ?? ""
    static let service = TokenService(secret: Array(secret.utf8), timeToLiveSeconds: 6 * 3600)

    // MARK: Valid tokens

    @Test func issuedTokenVerifiesWithTheConfiguredSecret() throws {
        try withServer { app in
            let before = unixNow
            let jwt = try token(app, "alice")
            let after = unixNow
            let claims = try Self.service.verify(jwt)
            #expect(claims.subject == "alice")
            #expect(claims.issuedAt >= before && claims.issuedAt <= after)
            #expect(claims.notBefore == claims.issuedAt)
            #expect(claims.expiresAt == claims.issuedAt + 6 * 3600, "default TTL is 6 hours")
            #expect(!claims.tokenID.isEmpty)
        }
    }

    @Test func issuedTokenCarriesTheClaimsOnTheWire() throws {
        try withServer { app in
            let response = try http(app, "POST", "/auth", json: #"{"name":"alice"}"#)
            let jwt = try #require(response.object["jwt"] as? String)
            let (header, payload) = try jwtParts(jwt)
            #expect(header["alg"] as? String == "HS256")
            #expect(payload["sub"] as? String == "alice")
            let iat = try #require(payload["iat"] as? Int)
            let nbf = try #require(payload["nbf"] as? Int)
            let exp = try #require(payload["exp"] as? Int)
            #expect(abs(Int64(iat) - unixNow) <= 5)
            #expect(nbf == iat)
            #expect(exp - iat == 21_600)
            #expect((payload["jti"] as? String)?.isEmpty == false)
            let expiresAt = try #require(response.object["expires_at"] as? String)
            #expect(ISO8601DateFormatter().date(from: expiresAt.replacingOccurrences(of: #"\.\d+"#, with: "", options: .regularExpression))
                .map { Int($0.timeIntervalSince1970) } == exp)
        }
    }

    @Test func configuredTTLIsUsed() throws {
        try withServer({ $0.tokenTTLSeconds = 60 }) { app in
            let claims = try Self.service.verify(try token(app, "alice"))
            #expect(claims.expiresAt - claims.issuedAt == 60)
        }
    }

    @Test func validTokenIsAcceptedByTheServer() throws {
        try withServer { app in
            let jwt = try token(app, "alice")
            #expect(try http(app, "GET", "/rooms", token: jwt).status == 200)
            let socket = try TestWebSocket(port: app.port, token: jwt)
            #expect(!socket.userID.isEmpty)
        }
    }

    /// The scheme is case-insensitive (RFC 9110 §11.1) and spaces or tabs around the token are not part of it; any
    /// other scheme is refused as an invalid token, not taken for a missing one. A bare token, without a scheme, is
    /// read as the token.
    @Test func bearerSchemeIsReadAsHTTPSpellsIt() throws {
        try withServer { app in
            let jwt = try token(app, "alice")
            for value in ["bearer \(jwt)", "BEARER \(jwt)", "Bearer   \(jwt)", "Bearer \t\(jwt)", "bEaReR \(jwt)", jwt] {
                let response = try http(app, "GET", "/rooms", headers: ["Authorization": value])
                #expect(response.status == 200, "\(value.prefix(12)): \(response.status) \(response.text)")
            }
            for value in ["Basic \(jwt)", "Bearer", "Bearer ", "Bearerx\(jwt)"] {
                let response = try http(app, "GET", "/rooms", headers: ["Authorization": value])
                #expect(response.status == 401, "\(value.prefix(12)): \(response.status)")
                #expect(response.errorCode == "auth:error:invalid-token", "\(value.prefix(12))")
            }
        }
    }

    // MARK: Bad tokens

    /// A token whose payload was swapped after signing: the signature no longer matches.
    static func tampered(_ jwt: String) -> String {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        let now = unixNow
        let payload = #"{"sub":"mallory","iat":\#(now),"nbf":\#(now),"exp":\#(now + 3600),"jti":"TOK-x"}"#
        return "\(parts[0]).\(Base64URLText.encode(payload)).\(parts[2])"
    }

    /// An unsigned token, `alg: none`, with otherwise valid claims.
    static func algNone(_ subject: String = "alice") -> String {
        let now = unixNow
        let header = Base64URLText.encode(#"{"alg":"none","typ":"JWT"}"#)
        let payload = Base64URLText.encode(#"{"sub":"\#(subject)","iat":\#(now),"nbf":\#(now),"exp":\#(now + 3600),"jti":"TOK-y"}"#)
        return "\(header).\(payload)."
    }

    /// Every kind of bad token, each with the reason TokenService must give.
    static func badTokens() throws -> [(label: String, token: String, reason: String)] {
        let valid = try service.issue(name: "alice").token
        let other = TokenService(secret: Array("another-secret-another-secret-42".utf8), timeToLiveSeconds: 3600)
        return [
            ("tampered payload", tampered(valid), "signature"),
            ("alg none", algNone(), "HS256"),
            ("alg none, signature kept", algNone() + String(valid.split(separator: ".")[2]), "HS256"),
            ("expired", try service.issue(name: "alice", ttl: 100, now: unixNow - 200).token, "expired"),
            ("expired long ago", try service.issue(name: "alice", now: unixNow - 7 * 3600).token, "expired"),
            ("nbf in the future", try service.issue(name: "alice", now: unixNow + 3600).token, "nbf"),
            ("another secret", try other.issue(name: "alice").token, "signature"),
            ("truncated signature", String(valid.dropLast(4)), "signature"),
            ("garbage", "not-a-token", "HS256"),
        ]
    }

    @Test func badTokensFailVerification() throws {
        for bad in try Self.badTokens() {
            do throws(TokenError) {
                let claims = try Self.service.verify(bad.token)
                Issue.record("\(bad.label) verified as \(claims.subject)")
            } catch {
                #expect(error.reason.contains(bad.reason), "\(bad.label): \(error.reason)")
            }
        }
    }

    /// A token signed here with `header`, valid claims and the service's secret.
    static func signed(header: String, parts extra: String = "") -> String {
        let now = unixNow
        let payload = #"{"sub":"carol","iat":\#(now),"nbf":\#(now),"exp":\#(now + 3600),"jti":"TOK-h"}"#
        let signingInput = Base64URLText.encode(header) + "." + Base64URLText.encode(payload)
        let signature = WebhookTests.hmacSHA256(key: Array(secret.utf8), message: Array(signingInput.utf8))
        return signingInput + "." + Base64URLText.encode(signature) + extra
    }

    /// The header's "alg" is read from the bytes before libjwt sees the token: spaces around the colon and the
    /// key's place in the object do not matter, anything but HS256 is refused, and so is a fourth part.
    @Test func headerAlgorithmIsReadWhereverItStands() throws {
        let spaced = try Self.service.verify(Self.signed(header: #"{"typ":"JWT", "alg" : "HS256"}"#))
        #expect(spaced.subject == "carol")
        for (header, label) in [(#"{"typ":"JWT","alg":"HS512"}"#, "HS512"), (#"{"typ":"JWT"}"#, "no alg"),
                                (#"{"alg":HS256}"#, "unquoted")] {
            #expect(throws: TokenError.self, "\(label)") { try Self.service.verify(Self.signed(header: header)) }
        }
        #expect(throws: TokenError.self) { try Self.service.verify(Self.signed(header: #"{"alg":"HS256"}"#, parts: ".x")) }
    }

    @Test func expiredWithinLeewayIsStillAccepted() throws {
        let token = try Self.service.issue(name: "alice", ttl: 2).token
        #expect(throws: Never.self) { try Self.service.verify(token, now: unixNow + 4) }
        #expect(throws: TokenError.self) { try Self.service.verify(token, now: unixNow + 8) }
    }

    @Test func badTokensAreRefusedOnRooms() throws {
        try withServer { app in
            for bad in try Self.badTokens() {
                let response = try http(app, "GET", "/rooms", token: bad.token)
                #expect(response.status == 401, "\(bad.label): \(response.status) \(response.text)")
                #expect(response.errorCode == "auth:error:invalid-token", "\(bad.label)")
                #expect(response.header("WWW-Authenticate") == "Bearer")
            }
        }
    }

    /// Verified tokens are cached by their SHA-256: a copy with one payload character changed (the signature kept)
    /// must miss the cache and fail verification, before and after the genuine token was cached.
    @Test func tamperedCopyOfACachedTokenIsRefused() throws {
        try withServer { app in
            let genuine = try token(app, "alice")
            var parts = genuine.split(separator: ".").map(String.init)
            var payload = Array(parts[1].utf8)
            payload[payload.count / 2] = payload[payload.count / 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            parts[1] = String(decoding: payload, as: UTF8.self)
            let tampered = parts.joined(separator: ".")
            #expect(try http(app, "GET", "/rooms", token: tampered).status == 401, "before the genuine token is cached")
            for _ in 0..<2 { #expect(try http(app, "GET", "/rooms", token: genuine).status == 200) }
            let refused = try http(app, "GET", "/rooms", token: tampered)
            #expect(refused.status == 401, "after it is cached: \(refused.text)")
            #expect(refused.errorCode == "auth:error:invalid-token")
        }
    }

    @Test func badTokensAreRefusedOnWebSocketBeforeUpgrade() throws {
        try withServer { app in
            for bad in try Self.badTokens() {
                let response = try Self.upgradeRequest(app, query: "?token=\(bad.token)")
                #expect(response.status == 401, "\(bad.label): \(response.status)")
                #expect(response.errorCode == "auth:error:invalid-token", "\(bad.label)")
                #expect(response.header("Sec-WebSocket-Accept") == nil)
                #expect(response.header("Upgrade") == nil)
            }
            let bearer = try Self.upgradeRequest(app, query: "", headers: "Authorization: Bearer \(Self.algNone())\r\n")
            #expect(bearer.status == 401)
            let missing = try Self.upgradeRequest(app, query: "")
            expectProblem(missing, 401, "auth:error:missing-token")
            let good = try Self.upgradeRequest(app, query: "?token=\(try token(app, "alice"))")
            #expect(good.status == 101, "the same request with a good token upgrades")
        }
    }

    @Test func tokenForUnknownNameCreatesThatUser() throws {
        try withServer { app in
            let jwt = try Self.service.issue(name: "carol").token
            let created = try http(app, "POST", "/rooms", json: #"{"display_name":"x"}"#, headers: ["Authorization": "Bearer \(jwt)"])
            // While carol's room is open her identity is kept for its claim (issue 34, item 8); once it closes,
            // the name's own identity is the one the token created.
            let room = try #require(created.object["id"] as? String)
            #expect(try http(app, "DELETE", "/rooms/\(room)", headers: ["Authorization": "Bearer \(jwt)"]).status == 204)
            let auth = try http(app, "POST", "/auth", json: #"{"name":"carol"}"#)
            #expect(created.object["created_by"] as? String == auth.object["user_id"] as? String)
        }
    }

    /// A WebSocket upgrade request on a fresh connection; returns the server's answer (101 or an error).
    static func upgradeRequest(_ app: ParlorApplication, query: String, headers: String = "") throws -> TestResponse {
        let key = Base64.encode((0..<16).map { _ in UInt8.random(in: 0...255) })
        let request = "GET /ws\(query) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\(headers)\r\n"
        return try rawRequest(app, request).0
    }
}

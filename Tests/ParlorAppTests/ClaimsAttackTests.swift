#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ParlorApp
import ParlorRooms

/// Issue 17, vulnerability 6: properly signed tokens with extreme claims, against the `parlor` binary. Each must be
/// answered 401 on every route and on /ws, and the server must still be alive afterwards.
@Suite struct ClaimsAttackTests {
    static let secret = "claims-attack-secret-0123456789"
    static let admin = "claims-attack-admin-0123456789"

    /// A JWT over `payload`, signed HS256 with `secret` by the test's own HMAC (the server's minting refuses such claims).
    static func signed(_ payload: String, secret: String = secret) -> String {
        let signingInput = Base64URLText.encode(#"{"alg":"HS256","typ":"JWT"}"#) + "." + Base64URLText.encode(payload)
        let signature = WebhookTests.hmacSHA256(key: Array(secret.utf8), message: Array(signingInput.utf8))
        return signingInput + "." + Base64URLText.encode(signature)
    }

    static var now: Int64 { Int64(Date().timeIntervalSince1970) }

    /// One request on a fresh connection to `port`.
    static func request(_ port: Int, _ method: String, _ path: String, json: String? = nil, headers: [String: String] = [:]) throws -> TestResponse {
        try RawConnection.oneRequest(port, method, path, json: json, headers: headers)
    }

    static let upgradeHeaders = ["Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13",
                                 "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="]

    /// The hostile payloads of the report and their neighbours: each is signed with the server's real secret.
    static func hostilePayloads() -> [(label: String, payload: String)] {
        let now = Self.now
        return [
            ("exp 2^63-1", #"{"sub":"alice","iat":\#(now),"exp":9223372036854775807}"#),
            ("exp 1e16", #"{"sub":"alice","iat":\#(now),"exp":10000000000000000}"#),
            ("exp 1e16 as a real", #"{"sub":"alice","iat":\#(now),"exp":1e16}"#),
            ("exp -1", #"{"sub":"alice","iat":\#(now),"exp":-1}"#),
            ("exp -2^63", #"{"sub":"alice","iat":\#(now),"exp":-9223372036854775808}"#),
            ("exp fractional", #"{"sub":"alice","iat":\#(now),"exp":\#(now + 3600).5}"#),
            ("exp a string", #"{"sub":"alice","iat":\#(now),"exp":"\#(now + 3600)"}"#),
            ("iat 2^63-1 (revoked user)", #"{"sub":"victim","iat":9223372036854775807,"exp":\#(now + 3600)}"#),
            ("iat -2^63", #"{"sub":"alice","iat":-9223372036854775808,"exp":\#(now + 3600)}"#),
            ("iat an hour ahead", #"{"sub":"alice","iat":\#(now + 3600),"exp":\#(now + 7200)}"#),
            ("nbf 2^63-1", #"{"sub":"alice","nbf":9223372036854775807,"exp":\#(now + 3600)}"#),
            ("nbf -2^63", #"{"sub":"alice","nbf":-9223372036854775808,"exp":\#(now + 3600)}"#),
            ("sub empty", #"{"sub":"","iat":\#(now),"exp":\#(now + 3600)}"#),
            ("sub control character", #"{"sub":"al\u0001ice","iat":\#(now),"exp":\#(now + 3600)}"#),
            ("sub bidi override", #"{"sub":"al\u202Eice","iat":\#(now),"exp":\#(now + 3600)}"#),
            ("sub 3,000 characters", #"{"sub":"\#(String(repeating: "x", count: 3_000))","iat":\#(now),"exp":\#(now + 3600)}"#),
            ("sub a number", #"{"sub":42,"iat":\#(now),"exp":\#(now + 3600)}"#),
            ("payload an array", #"[1,2,3]"#),
        ]
    }

    @Test func extremeClaimsAreRefusedOnEveryRouteAndTheServerSurvives() throws {
        let server = try ServerProcess(["--jwt-secret", Self.secret, "--admin-token", Self.admin])
        let port = server.port
        // A revoked user, so a token with an absurd iat reaches the revocation check.
        let victim = try Self.request(port, "POST", "/auth", json: #"{"name":"victim"}"#)
        #expect(victim.status == 200)
        #expect(try Self.request(port, "POST", "/users/victim/revoke", headers: ["Authorization": "Bearer \(Self.admin)"]).status == 200)
        let room = try Self.request(port, "POST", "/rooms", json: #"{"display_name":"target"}"#).object["id"] as? String ?? "RM-none"

        for (label, payload) in Self.hostilePayloads() {
            let token = Self.signed(payload)
            let bearer = ["Authorization": "Bearer \(token)"]
            let answers = [
                ("GET /rooms", try Self.request(port, "GET", "/rooms", headers: bearer)),
                ("POST /rooms", try Self.request(port, "POST", "/rooms", json: #"{"display_name":"x"}"#, headers: bearer)),
                ("GET /rooms/{id}", try Self.request(port, "GET", "/rooms/\(room)", headers: bearer)),
                ("GET /rooms/{id}/members", try Self.request(port, "GET", "/rooms/\(room)/members", headers: bearer)),
                ("GET /rooms/{id}/events", try Self.request(port, "GET", "/rooms/\(room)/events", headers: bearer)),
                ("DELETE /rooms/{id}", try Self.request(port, "DELETE", "/rooms/\(room)", headers: bearer)),
                ("GET /ws", try Self.request(port, "GET", "/ws?token=\(token)", headers: Self.upgradeHeaders)),
                ("GET /ws (header)", try Self.request(port, "GET", "/ws", headers: Self.upgradeHeaders.merging(bearer) { $1 })),
            ]
            for (route, response) in answers {
                #expect(response.status == 401, "\(label) on \(route): \(response.status) \(response.text)")
                #expect((response.object["detail"] as? String)?.hasPrefix("invalid token:") == true, "\(label) on \(route): \(response.text)")
            }
            #expect(server.child.process.isRunning, "the server died on \(label)")
        }
        #expect(try Self.request(port, "GET", "/healthz").status == 200)
        // A sane token still works: the refusals were about the claims, not the secret.
        let sane = Self.signed(#"{"sub":"alice","iat":\#(Self.now),"exp":\#(Self.now + 600)}"#)
        #expect(try Self.request(port, "GET", "/rooms", headers: ["Authorization": "Bearer \(sane)"]).status == 200)
    }

    @Test func absurdTokenLifetimesAreRefusedByTheCLI() throws {
        for ttl in ["9300000000000000", "9223372036854775807", "-5", "0", "315360001", "1e9"] {
            let minted = try CLITests.runCapturingErrors(["token", "--name", "alice", "--ttl", ttl, "--jwt-secret", Self.secret])
            #expect(minted.status == 2, "--ttl \(ttl): exit \(minted.status)")
            #expect(minted.errors.contains("--ttl must be a whole number of seconds"), "--ttl \(ttl): \(minted.errors)")
        }
        let badName = try CLITests.runCapturingErrors(["token", "--name", "al\u{202E}ice", "--jwt-secret", Self.secret])
        #expect(badName.status == 2)
        #expect(badName.errors.contains("bidirectional"))
        #expect(try CLITests.runCapturingErrors(["token", "--name", "alice", "--ttl", "315360000", "--jwt-secret", Self.secret]).status == 0)
    }
}

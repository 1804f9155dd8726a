#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// Issue 34, item 17: a properly signed token whose JOSE header lists critical extensions (`crit`, RFC 7515 §4.1.11)
/// must be refused, since Parlor understands none; against the `parlor` binary, on HTTP and on /ws.
@Suite struct TokenHeaderAttackTests {
    static let secret = "token-header-attack-secret-0123456789"

    /// A JWT with `header` over valid claims, signed HS256 with the server's secret by the test's own HMAC.
    static func signed(header: String) -> String {
        let now = Int64(Date().timeIntervalSince1970)
        let payload = #"{"sub":"alice","iat":\#(now),"exp":\#(now + 600)}"#
        let signingInput = Base64URLText.encode(header) + "." + Base64URLText.encode(payload)
        let signature = WebhookTests.hmacSHA256(key: Array(secret.utf8), message: Array(signingInput.utf8))
        return signingInput + "." + Base64URLText.encode(signature)
    }

    @Test func tokensWithCriticalHeaderExtensionsAreRefused() throws {
        let server = try ServerProcess(["--jwt-secret", Self.secret])
        let headers = [
            ("crit with b64", #"{"alg":"HS256","typ":"JWT","crit":["b64"],"b64":false}"#),
            ("crit with an unknown name", #"{"alg":"HS256","crit":["exp"],"exp":1}"#),
            ("crit empty", #"{"alg":"HS256","crit":[]}"#),
            ("crit not an array", #"{"crit":"x","alg":"HS256"}"#),
            ("alg twice", #"{"alg":"none","alg":"HS256"}"#),
        ]
        for (label, header) in headers {
            let token = Self.signed(header: header)
            for (route, response) in [
                ("GET /rooms", try RawConnection.oneRequest(server.port, "GET", "/rooms", headers: ["Authorization": "Bearer \(token)"])),
                ("GET /ws", try RawConnection.oneRequest(server.port, "GET", "/ws?token=\(token)", headers: ClaimsAttackTests.upgradeHeaders)),
            ] {
                #expect(response.status == 401, "\(label) on \(route): \(response.status) \(response.text)")
                #expect(response.errorCode == "auth:error:invalid-token", "\(label) on \(route): \(response.text)")
            }
        }
        // The same claims under a plain header pass: the refusals were about the header alone.
        let plain = Self.signed(header: #"{"typ":"JWT", "alg" : "HS256"}"#)
        #expect(try RawConnection.oneRequest(server.port, "GET", "/rooms", headers: ["Authorization": "Bearer \(plain)"]).status == 200)
    }
}

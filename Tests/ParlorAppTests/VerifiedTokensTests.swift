import Testing
@testable import ParlorApp
import ParlorRooms

/// The verified-token cache: what it keeps, and that a hit never stands in for a token it did not verify.
@Suite struct VerifiedTokensTests {
    static let service = TokenService(secret: Array("verified-tokens-test-secret".utf8), timeToLiveSeconds: 3600)

    @Test func webSocketLookupsAreNotKept() throws {
        let cache = VerifiedTokens()
        let token = try Self.service.issue(name: "alice").token
        let claims = try cache.claims(of: token, service: Self.service, remember: false)
        #expect(claims.subject == "alice")
        #expect(cache.count == 0, "a token looked up for an upgrade is not kept")
        _ = try cache.claims(of: token, service: Self.service)
        #expect(cache.count == 1)
        // A remembered token is found by a later upgrade too, and not stored twice.
        #expect(try cache.claims(of: token, service: Self.service, remember: false) == claims)
        #expect(cache.count == 1)
    }

    @Test func aTamperedCopyOfACachedTokenIsVerifiedAndRefused() throws {
        let cache = VerifiedTokens()
        let token = try Self.service.issue(name: "alice").token
        _ = try cache.claims(of: token, service: Self.service)
        var parts = token.split(separator: ".").map(String.init)
        var payload = Array(parts[1].utf8)  // a middle character: the last one may only carry padding bits
        payload[payload.count / 2] = payload[payload.count / 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        parts[1] = String(decoding: payload, as: UTF8.self)
        #expect(throws: TokenError.self) { try cache.claims(of: parts.joined(separator: "."), service: Self.service) }
        #expect(cache.count == 1)
    }
}

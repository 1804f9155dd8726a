#if canImport(Glibc)
import Glibc
#endif
import CJWT
import ParlorCodec

/// HS256 tokens through libjwt. libjwt 1.10 accepts alg "none" when no key is given and checks neither exp nor nbf,
/// so verification always passes the key, pins the algorithm and checks the times itself.
public struct TokenService: Sendable {
    private let secret: [UInt8]
    public let timeToLive: Int64
    /// Seconds of clock difference tolerated on nbf and exp.
    public let leeway: Int64 = 5

    public init(secret: [UInt8], timeToLiveSeconds: Int64) {
        precondition(!secret.isEmpty, "a token secret must not be empty")
        self.secret = secret
        self.timeToLive = timeToLiveSeconds
    }

    /// The longest lifetime a minted token may have (ten years): `parlor token --ttl` and the server refuse more.
    public static let maxTimeToLive: Int64 = 10 * 365 * 86_400

    /// Mints a token for `name`, valid from now for the configured TTL (or `ttl` seconds, 1...maxTimeToLive).
    /// `userID` goes in the `uid` claim, for an identity that is not the name's own (see UserDirectory).
    public func issue(name: String, userID: String? = nil, ttl: Int64? = nil,
                      now: Int64 = Timestamp.nowMilliseconds() / 1000) throws(TokenError) -> (token: String, claims: TokenClaims) {
        let lifetime = ttl ?? timeToLive
        guard (1...Self.maxTimeToLive).contains(lifetime) else {
            throw TokenError(reason: "a token's lifetime must be 1 to \(Self.maxTimeToLive) seconds, not \(lifetime)")
        }
        let (expiresAt, overflow) = now.addingReportingOverflow(lifetime)
        guard !overflow, now >= 0, expiresAt <= TokenClaims.latestTime else {
            throw TokenError(reason: "the token would expire after year 9999")
        }
        let claims = TokenClaims(subject: name, issuedAt: now, notBefore: now, expiresAt: expiresAt,
                                 tokenID: Identifier.make(Identifier.token), userID: userID)
        var jwt: OpaquePointer?
        guard jwt_new(&jwt) == 0, let jwt else { throw TokenError(reason: "jwt_new failed") }
        defer { jwt_free(jwt) }
        let algSet = secret.withUnsafeBufferPointer { jwt_set_alg(jwt, JWT_ALG_HS256, $0.baseAddress, Int32($0.count)) }
        guard algSet == 0,
              jwt_add_grant(jwt, "sub", claims.subject) == 0,
              jwt_add_grant_int(jwt, "iat", Int(claims.issuedAt)) == 0,
              jwt_add_grant_int(jwt, "nbf", Int(claims.notBefore)) == 0,
              jwt_add_grant_int(jwt, "exp", Int(claims.expiresAt)) == 0,
              jwt_add_grant(jwt, "jti", claims.tokenID) == 0,
              userID.map({ jwt_add_grant(jwt, "uid", $0) == 0 }) ?? true,
              let encoded = jwt_encode_str(jwt) else {
            throw TokenError(reason: "could not encode the token")
        }
        defer { free(encoded) }
        return (String(cString: encoded), claims)
    }

    /// Checks signature, algorithm, nbf and exp; returns the claims of a valid token.
    public func verify(_ token: String, now: Int64 = Timestamp.nowMilliseconds() / 1000) throws(TokenError) -> TokenClaims {
        guard !token.isEmpty, token.utf8.count <= 8192 else { throw TokenError(reason: "the token is empty or too long") }
        // A token's header must name HS256 before libjwt sees it: "none" or another family is refused outright.
        guard let headerAlgorithm = Self.headerAlgorithm(of: token), headerAlgorithm == "HS256" else {
            throw TokenError(reason: "the token must be signed with HS256")
        }
        var decoded: OpaquePointer?
        let status = secret.withUnsafeBufferPointer { jwt_decode(&decoded, token, $0.baseAddress, Int32($0.count)) }
        guard status == 0, let decoded else { throw TokenError(reason: "the token's signature is invalid") }
        defer { jwt_free(decoded) }
        guard jwt_get_alg(decoded) == JWT_ALG_HS256 else { throw TokenError(reason: "the token must be signed with HS256") }
        // The signature covers the payload's bytes: read the claims from them with our own parser and bounds.
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(String(parts[1])) else {
            throw TokenError(reason: "the token's payload is not base64url")
        }
        return try TokenClaims.validated(payload: payload, now: now, leeway: leeway)
    }

    /// The "alg" of the token's header, read without trusting anything else in it.
    static func headerAlgorithm(of token: String) -> String? {
        guard let headerPart = token.split(separator: ".", omittingEmptySubsequences: false).first,
              let bytes = Base64URL.decode(String(headerPart)) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        // The header is tiny JSON; find "alg":"…" without a full parse.
        guard let range = text.range(of: "\"alg\"") else { return nil }
        let rest = text[range.upperBound...].drop { $0 == " " || $0 == ":" }
        guard rest.first == "\"" else { return nil }
        return String(rest.dropFirst().prefix { $0 != "\"" })
    }
}

/// base64url without padding, as JWT uses it.
enum Base64URL {
    static func decode(_ string: String) -> [UInt8]? {
        var standard = String(string.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        while standard.utf8.count % 4 != 0 { standard += "=" }
        return Base64.decode(standard)
    }
}

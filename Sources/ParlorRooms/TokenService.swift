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
        // Parts are found on the token's bytes: Character-level splitting and decoding cost more than the HMAC.
        let bytes = Array(token.utf8)
        // A token's header must name HS256 and no crit before libjwt sees it: "none" or another family is refused outright.
        let headerEnd = bytes.firstIndex(of: UInt8(ascii: ".")) ?? bytes.endIndex
        try TokenHeader.check(bytes[..<headerEnd])
        var decoded: OpaquePointer?
        let status = secret.withUnsafeBufferPointer { jwt_decode(&decoded, token, $0.baseAddress, Int32($0.count)) }
        guard status == 0, let decoded else { throw TokenError(reason: "the token's signature is invalid") }
        defer { jwt_free(decoded) }
        guard jwt_get_alg(decoded) == JWT_ALG_HS256 else { throw TokenError(reason: "the token must be signed with HS256") }
        // The signature covers the payload's bytes: read the claims from them with our own parser and bounds.
        guard let payloadRange = Self.payloadRange(of: bytes), let payload = Base64URL.decode(bytes[payloadRange]) else {
            throw TokenError(reason: "the token's payload is not base64url")
        }
        return try TokenClaims.validated(payload: payload, now: now, leeway: leeway)
    }

    /// Where the payload is in `header.payload.signature`; nil unless there are exactly two dots.
    static func payloadRange(of token: [UInt8]) -> Range<Int>? {
        let dot = UInt8(ascii: ".")
        guard let first = token.firstIndex(of: dot),
              let second = token[(first + 1)...].firstIndex(of: dot),
              !token[(second + 1)...].contains(dot) else { return nil }
        return (first + 1)..<second
    }
}

/// base64url without padding, as JWT uses it.
enum Base64URL {
    static func decode(_ string: String) -> [UInt8]? {
        decode(Array(string.utf8)[...])
    }

    /// From the ASCII bytes: "-" and "_" become "+" and "/", and the padding is put back.
    static func decode(_ part: ArraySlice<UInt8>) -> [UInt8]? {
        var standard: [UInt8] = []
        standard.reserveCapacity(part.count + 3)
        for byte in part {
            switch byte {
            case UInt8(ascii: "-"): standard.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): standard.append(UInt8(ascii: "/"))
            default: standard.append(byte)
            }
        }
        while standard.count % 4 != 0 { standard.append(UInt8(ascii: "=")) }
        return Base64.decode(bytes: standard)
    }
}

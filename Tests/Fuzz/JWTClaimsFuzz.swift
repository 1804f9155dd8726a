// libFuzzer target for the JWT claims check (TokenClaims.validated): what a server does with the payload of a token
// whose signature is good, so every payload here is one a holder of the secret could sign. Compiled with
// Sources/ParlorProtocol/JSON/{JSONParser,JSONValue,JSONWriter}.swift and Sources/ParlorRooms/{TokenClaims,TextRules}.swift
// as module ParlorJWTClaims (see run.sh). Byte 0 picks the clock ("now"), the rest is the payload. Checks:
// - no crash: no arithmetic overflow on any claim (the bug of issue 17: exp = 2^63-1, iat = 2^63-1, exp = 1e16);
// - accepted claims are in range: times in 0...latestTime, exp not past and nbf not ahead of now (with leeway),
//   and exp in milliseconds still fits an Int64;
// - an accepted sub follows the user name rules and is already in their normal form (checking it again keeps it);
// - the outcome is the same for the payload re-encoded by JSONWriter (key order and escapes do not matter).

enum JWTClaimsFuzz {
    static let leeway: Int64 = 5
    /// Clocks to check against: the epoch, today, the last second claims may name, and just around them.
    static let clocks: [Int64] = [0, 1, 1_764_547_200, TokenClaims.latestTime - 5, TokenClaims.latestTime]

    static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("JWT claims invariant violated: \(message())") }
    }

    static func outcome(_ payload: [UInt8], now: Int64) -> Result<TokenClaims, TokenError> {
        Result { () throws(TokenError) -> TokenClaims in try TokenClaims.validated(payload: payload, now: now, leeway: leeway) }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let now = JWTClaimsFuzz.clocks[Int(bytes[0]) % JWTClaimsFuzz.clocks.count]
    let payload = Array(bytes.dropFirst())
    let result = JWTClaimsFuzz.outcome(payload, now: now)
    guard case .success(let claims) = result else { return 0 }

    let latest = TokenClaims.latestTime
    for (name, time) in [("exp", claims.expiresAt), ("iat", claims.issuedAt), ("nbf", claims.notBefore)] {
        JWTClaimsFuzz.check((0...latest).contains(time), "\(name) \(time) accepted")
    }
    JWTClaimsFuzz.check(now < claims.expiresAt + JWTClaimsFuzz.leeway, "expired token accepted: exp \(claims.expiresAt), now \(now)")
    JWTClaimsFuzz.check(claims.notBefore <= now + JWTClaimsFuzz.leeway, "token not yet valid accepted: nbf \(claims.notBefore), now \(now)")
    JWTClaimsFuzz.check(claims.issuedAt <= now + JWTClaimsFuzz.leeway, "token from the future accepted: iat \(claims.issuedAt), now \(now)")
    JWTClaimsFuzz.check(!claims.expiresAt.multipliedReportingOverflow(by: 1000).overflow, "exp in milliseconds overflows")

    let rules = TextRules.userName
    let subject = claims.subject
    JWTClaimsFuzz.check(!subject.isEmpty && subject.count <= rules.maxCharacters && subject.utf8.count <= rules.maxBytes,
                        "sub of \(subject.count) characters, \(subject.utf8.count) bytes accepted")
    JWTClaimsFuzz.check(!subject.unicodeScalars.contains { TextRules.refusal(of: $0) != nil }, "sub with a refused character accepted")
    let again = TextRules.check(subject, minCharacters: rules.minCharacters, maxCharacters: rules.maxCharacters, maxBytes: rules.maxBytes)
    JWTClaimsFuzz.check(again == .success(subject), "sub is not in normal form: checking it again gives \(again)")
    JWTClaimsFuzz.check(claims.tokenID.utf8.count <= 128 && (claims.userID?.utf8.count ?? 0) <= 128, "long jti or uid accepted")

    // The same claims from the payload as JSONWriter writes it.
    guard let value = try? JSONParser.parse(payload, maxDepth: 8) else {
        fatalError("JWT claims invariant violated: accepted a payload that does not parse")
    }
    let rewritten = JWTClaimsFuzz.outcome(value.encoded(), now: now)
    JWTClaimsFuzz.check((try? rewritten.get()) == claims, "re-encoded payload gives \(rewritten), not \(claims)")
    return 0
}

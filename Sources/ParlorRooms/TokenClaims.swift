#if canImport(ParlorProtocol)
import ParlorProtocol
#endif

/// The claims Parlor puts in, and checks on, every token.
public struct TokenClaims: Sendable, Equatable {
    /// The user's name (`sub`): their identity, unless `userID` names a separate one.
    public let subject: String
    public let issuedAt: Int64
    public let notBefore: Int64
    public let expiresAt: Int64
    public let tokenID: String
    /// `uid`: the user id when the token is for one identity among several of that name (see UserDirectory);
    /// nil in tokens minted from a name alone (`parlor token`, an app's backend), which mean the name's own identity.
    public let userID: String?

    public init(subject: String, issuedAt: Int64, notBefore: Int64, expiresAt: Int64, tokenID: String, userID: String? = nil) {
        self.subject = subject
        self.issuedAt = issuedAt
        self.notBefore = notBefore
        self.expiresAt = expiresAt
        self.tokenID = tokenID
        self.userID = userID
    }
}

public struct TokenError: Error, Sendable, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }
    public init(reason: String) { self.reason = reason }
}

extension TokenClaims {
    /// The latest time a claim may name (the end of year 9999, Unix seconds). Bounding every time claim keeps the
    /// arithmetic done with them (leeway, milliseconds, timers) far from overflowing.
    public static let latestTime: Int64 = 253_402_300_799

    /// The claims of a token payload whose signature is already verified, checked as a server must before trusting
    /// them: times are whole numbers of seconds in 0...latestTime, `exp` is required and not past (with `leeway`
    /// seconds), `nbf` and `iat` are not ahead, `sub` follows the user name rules (and comes back normalised), `jti` and
    /// `uid`, when present, are short strings. Pure: the JWT claims fuzz target runs it on arbitrary payloads.
    public static func validated(payload: [UInt8], now: Int64, leeway: Int64) throws(TokenError) -> TokenClaims {
        let object: JSONObject
        do {
            guard case .object(let parsed) = try JSONParser.parse(payload, maxDepth: 8) else {
                throw TokenError(reason: "the token's payload is not a JSON object")
            }
            object = parsed
        } catch let error as TokenError {
            throw error
        } catch {
            throw TokenError(reason: "the token's payload is not valid JSON")
        }
        guard case .string(let rawSubject)? = object["sub"] else { throw TokenError(reason: "the token has no sub claim (a string)") }
        let subject: String
        switch TextRules.check(rawSubject, minCharacters: TextRules.userName.minCharacters,
                               maxCharacters: TextRules.userName.maxCharacters, maxBytes: TextRules.userName.maxBytes) {
        case .success(let valid): subject = valid
        case .failure(let violation): throw TokenError(reason: "the token's sub claim \(violation.rule)")
        }
        guard let expiresAt = try time(object, "exp") else { throw TokenError(reason: "the token has no exp claim") }
        let notBefore = try time(object, "nbf")
        let issuedAt = try time(object, "iat") ?? notBefore ?? 0
        // now and leeway are the server's own (small, positive); every claim is bounded: no sum here can overflow.
        if now >= expiresAt + leeway { throw TokenError(reason: "the token has expired") }
        if let notBefore, now + leeway < notBefore { throw TokenError(reason: "the token is not valid yet (nbf)") }
        // A token from the future would outlive a revocation (tokens issued before it are refused by their iat).
        if now + leeway < issuedAt { throw TokenError(reason: "the token's iat is in the future") }
        let tokenID = try shortString(object, "jti") ?? ""
        let userID = try shortString(object, "uid")
        return TokenClaims(subject: subject, issuedAt: issuedAt, notBefore: notBefore ?? issuedAt, expiresAt: expiresAt,
                           tokenID: tokenID, userID: userID)
    }

    /// A time claim: absent, or whole seconds since 1970 no later than `latestTime`.
    private static func time(_ object: JSONObject, _ name: String) throws(TokenError) -> Int64? {
        guard let value = object[name] else { return nil }
        guard case .number(let number) = value, number.rounded() == number, number >= 0, number <= Double(latestTime) else {
            throw TokenError(reason: "the token's \(name) claim must be whole seconds from 0 to \(latestTime) (year 9999)")
        }
        return Int64(number)
    }

    private static func shortString(_ object: JSONObject, _ name: String) throws(TokenError) -> String? {
        guard let value = object[name] else { return nil }
        guard case .string(let text) = value, text.utf8.count <= 128 else {
            throw TokenError(reason: "the token's \(name) claim must be a string of at most 128 bytes")
        }
        return text
    }
}

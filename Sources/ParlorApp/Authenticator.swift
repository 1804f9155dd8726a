import ParlorCodec
import ParlorHTTP
import ParlorLoop
import ParlorRooms

/// Turns a request's bearer token (Authorization header, or ?token= for browsers' WebSockets) into a user,
/// refusing tokens that are forged, expired, not yet valid, or issued before the user's revocation time.
struct Authenticator: Sendable {
    let tokens: TokenService
    let users: UserDirectory
    let access: AccessMode
    let verified: VerifiedTokens
    /// Whether a failure to load a user means the database is unavailable (503, try later) rather than a bug (500).
    let isStorageFailure: @Sendable (any Error) -> Bool

    struct Identity: Sendable {
        let user: User
        let claims: TokenClaims
    }

    /// What the request's token says without the database.
    enum Resolution {
        /// Decided on the spot: the identity, or nil when the request carries no token.
        case decided(Identity?)
        /// A valid token whose user is not cached: `load` it, off the event loops.
        case needsUser(TokenClaims)
    }

    /// Checks the request's token and decides from the user cache when it can, so an event loop may call it;
    /// 401 when the token is bad or names a user the cache knows is not there, revoked or blocked.
    /// `remember`: keep a newly verified token in the cache (GET /ws passes false, see `VerifiedTokens`).
    func resolve(_ request: HTTPRequest, remember: Bool = true) throws(HTTPError) -> Resolution {
        guard let token = Self.token(in: request.head) else { return .decided(nil) }
        let claims: TokenClaims
        do {
            claims = try verified.claims(of: token, service: tokens, remember: remember)
        } catch {
            throw HTTPError.unauthorized("invalid token: \(error.reason)")
        }
        switch users.cachedStatus(subject: claims.subject, userID: claims.userID) {
        case .decided(let status): return .decided(try accept(status, claims: claims))
        case .notCached: return .needsUser(claims)
        }
    }

    /// The identity `claims` names, loading its user and creating it on first use: this writes to the database,
    /// so it runs off the event loops (`DatabaseExecutor.write`).
    func load(_ claims: TokenClaims) throws(HTTPError) -> Identity {
        let status: UserDirectory.UserStatus?
        do {
            status = try users.status(subject: claims.subject, userID: claims.userID)
        } catch {
            throw isStorageFailure(error) ? Routes.databaseUnavailable : HTTPError.internalError("could not load the token's user")
        }
        return try accept(status, claims: claims)
    }

    /// The identity, unless its user does not exist, revoked the token or is blocked (401).
    private func accept(_ status: UserDirectory.UserStatus?, claims: TokenClaims) throws(HTTPError) -> Identity {
        guard let status else { throw HTTPError.unauthorized("invalid token: its user does not exist") }
        // iat has whole seconds: a token from the second of the revocation is refused too, to be safe.
        // (Claims are bounded to year 9999, so iat * 1000 cannot overflow.)
        if status.tokensValidAfter > 0, claims.issuedAt * 1000 <= status.tokensValidAfter {
            throw HTTPError.unauthorized("invalid token: the token was revoked")
        }
        if status.blockedUntil > Timestamp.nowMilliseconds() {
            throw HTTPError.unauthorized("invalid token: the user is blocked until \(Timestamp.iso8601(milliseconds: status.blockedUntil))")
        }
        return Identity(user: status.user, claims: claims)
    }

    /// The identity, or 401 when the request carried no token.
    static func require(_ identity: Identity?) throws(HTTPError) -> Identity {
        guard let identity else {
            throw HTTPError(.authMissingToken, title: "Unauthorized",
                            detail: "send a token from POST /auth as Authorization: Bearer <jwt> or ?token=<jwt>",
                            headers: HTTPHeaders([("WWW-Authenticate", "Bearer")]))
        }
        return identity
    }

    private static let bearerPrefix: [UInt8] = Array("bearer ".utf8)

    static func token(in head: HTTPRequestHead) -> String? {
        if var authorization = head.headers["Authorization"] {
            // "Bearer <token>", the scheme case-insensitive (RFC 9110 §11.1), spaces around the token dropped. On the
            // bytes, the token copied once: this runs per request.
            let bearerToken = authorization.withUTF8 { bytes -> String? in
                guard bytes.count > 7, zip(bytes.prefix(7), Self.bearerPrefix).allSatisfy({ $0 | 0x20 == $1 }) else { return nil }
                var start = 7, end = bytes.count
                while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
                while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
            }
            return bearerToken ?? authorization  // not Bearer: let verification reject it with a clear reason
        }
        return head.query["token"]
    }
}

/// Who may get a token from POST /auth.
public enum AccessMode: String, Sendable, CaseIterable {
    /// Any name gets a token, as in the tutorial: for LANs and tests.
    case open
    /// POST /auth needs the access code; every /rooms and /ws request needs a token.
    case code
    /// POST /auth is off: tokens come from `parlor token` or the app's own backend holding the secret.
    case closed
}

/// Tokens whose signature was already checked, so a client polling with the same token costs a dictionary lookup
/// rather than an HMAC. The times (exp, nbf) are checked again on every use; revocation is checked by the caller.
/// A WebSocket upgrade looks its token up but does not add it: a connection verifies once, and 10,000 connections'
/// tokens kept ~5 MiB here (a 260-byte key and the claims each, bench/HISTORY.md, session 21) for nothing.
final class VerifiedTokens: Sendable {
    private let cache = Locked<[Key: TokenClaims]>([:])
    private let capacity = 10_000

    /// Tokens held.
    var count: Int { cache.withLock { $0.count } }

    func claims(of token: String, service: TokenService, remember: Bool = true) throws(TokenError) -> TokenClaims {
        let now = Timestamp.nowMilliseconds() / 1000
        if let claims = cache.withLock({ $0[Key(token: token)] }) {
            if now >= claims.expiresAt + service.leeway { throw TokenError(reason: "the token has expired") }
            if now + service.leeway < claims.notBefore { throw TokenError(reason: "the token is not valid yet (nbf)") }
            return claims
        }
        let claims = try service.verify(token, now: now)
        guard remember else { return claims }
        cache.withLock { cache in
            if cache.count >= capacity { cache.removeAll(keepingCapacity: true) }
            cache[Key(token: token)] = claims
        }
        return claims
    }

    /// A token as a dictionary key that hashes only its last 32 bytes, which lie in its signature (an HMAC, so
    /// they differ between any two tokens signed here): SipHash over a whole 260-byte token was most of a cached
    /// lookup. Equality still compares whole tokens, and only verified tokens are stored, so tokens made to collide
    /// with one cost a comparison each.
    struct Key: Hashable {
        let token: String

        func hash(into hasher: inout Hasher) {
            var token = token
            token.withUTF8 { bytes in hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes.suffix(32)))) }
        }

        static func == (lhs: Key, rhs: Key) -> Bool { lhs.token == rhs.token }
    }
}

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

    struct Identity: Sendable {
        let user: User
        let claims: TokenClaims
    }

    /// The token's identity; nil when the request carries no token; 401 when it carries a bad one.
    func identity(for request: HTTPRequest) throws(HTTPError) -> Identity? {
        guard let token = Self.token(in: request.head) else { return nil }
        let claims: TokenClaims
        do {
            claims = try verified.claims(of: token, service: tokens)
        } catch {
            throw HTTPError.unauthorized("invalid token: \(error.reason)")
        }
        let status: UserDirectory.UserStatus?
        do {
            status = try users.status(subject: claims.subject, userID: claims.userID)
        } catch {
            throw HTTPError.internalError("could not load the token's user")
        }
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

    /// The token's user; in `code` and `closed` access modes a token is required.
    func user(for request: HTTPRequest) throws(HTTPError) -> User? {
        if access != .open { return try requireUser(for: request) }
        return try identity(for: request)?.user
    }

    func requireIdentity(for request: HTTPRequest) throws(HTTPError) -> Identity {
        guard let identity = try identity(for: request) else {
            throw HTTPError(.authMissingToken, title: "Unauthorized",
                            detail: "send a token from POST /auth as Authorization: Bearer <jwt> or ?token=<jwt>",
                            headers: HTTPHeaders([("WWW-Authenticate", "Bearer")]))
        }
        return identity
    }

    func requireUser(for request: HTTPRequest) throws(HTTPError) -> User {
        try requireIdentity(for: request).user
    }

    static func token(in head: HTTPRequestHead) -> String? {
        if let authorization = head.headers["Authorization"] {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { return String(parts[1]).trimmingSpaces }
            return authorization  // not Bearer: let verification reject it with a clear reason
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
final class VerifiedTokens: Sendable {
    private let cache = Locked<[String: TokenClaims]>([:])
    private let capacity = 10_000

    func claims(of token: String, service: TokenService) throws(TokenError) -> TokenClaims {
        let now = Timestamp.nowMilliseconds() / 1000
        if let claims = cache.withLock({ $0[token] }) {
            if now >= claims.expiresAt + service.leeway { throw TokenError(reason: "the token has expired") }
            if now + service.leeway < claims.notBefore { throw TokenError(reason: "the token is not valid yet (nbf)") }
            return claims
        }
        let claims = try service.verify(token, now: now)
        cache.withLock { cache in
            if cache.count >= capacity { cache.removeAll(keepingCapacity: true) }
            cache[token] = claims
        }
        return claims
    }
}

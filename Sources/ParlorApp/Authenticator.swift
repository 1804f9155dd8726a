import ParlorCodec
import ParlorHTTP
import ParlorRooms

/// Turns a request's bearer token (Authorization header, or ?token= for browsers' WebSockets) into a user.
struct Authenticator: Sendable {
    let tokens: TokenService
    let users: UserDirectory

    /// The token's user; nil when the request carries no token; 401 when it carries a bad one.
    func user(for request: HTTPRequest) throws(HTTPError) -> User? {
        guard let token = Self.token(in: request.head) else { return nil }
        let claims: TokenClaims
        do {
            claims = try tokens.verify(token)
        } catch {
            throw HTTPError.unauthorized("invalid token: \(error.reason)")
        }
        do {
            return try users.findOrCreate(name: claims.subject)
        } catch {
            throw HTTPError.internalError("could not load the token's user")
        }
    }

    func requireUser(for request: HTTPRequest) throws(HTTPError) -> User {
        guard let user = try user(for: request) else {
            throw HTTPError(status: 401, code: "auth:error:missing-token", title: "Unauthorized",
                            detail: "send a token from POST /auth as Authorization: Bearer <jwt> or ?token=<jwt>",
                            headers: HTTPHeaders([("WWW-Authenticate", "Bearer")]))
        }
        return user
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

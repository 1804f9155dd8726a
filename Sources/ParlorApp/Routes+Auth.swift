import ParlorCodec
import ParlorHTTP
import ParlorMetrics
import ParlorRooms

extension Routes {
    /// POST /auth `{"name":"alice"}` → `{"name":"alice","jwt":"…"}` (the tutorial app's contract), plus extras:
    /// `user_id`, `expires_at` and `claim`, the secret that gets this identity back while it is in live use
    /// (send it as `"claim"` on the next /auth; see UserDirectory.AuthRequest for the rules). The input is checked and
    /// the token signed on the loop; the user row is written on the write thread. `--auth-rate` is checked before,
    /// by `AuthRateLimitMiddleware`.
    func auth(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        switch configuration.access {
        case .open: break
        case .closed:
            throw HTTPError(.authDisabled, title: "Forbidden",
                            detail: "this server issues no tokens itself: get one from the app's backend (parlor token)")
        case .code: break
        }
        let body = try request.jsonObject()
        if configuration.access == .code {
            guard case .string(let code)? = body["code"] else { throw HTTPError.missingField("code") }
            guard let expected = configuration.accessCode, ConstantTime.equal(Array(code.utf8), Array(expected.utf8)) else {
                throw HTTPError(.authInvalidCode, title: "Forbidden", detail: "the access code is wrong")
            }
        }
        let name = try FieldRules.requiredText("name", in: body, min: 1, max: 64)
        let claim: String?
        switch body["claim"] {
        case nil, .null?: claim = nil
        case .string(let text)?: claim = text
        case let other?: throw HTTPError.invalidField("claim", "must be the string an earlier /auth returned, not \(other.typeName)")
        }
        let (liveUsers, tokens, logger, routes) = (rooms.liveUsers, self.tokens, self.logger, self)
        // The user row is written on the write thread, in one transaction with the other logins waiting for it
        // (AuthWriteQueue); the token is signed back on the loop, beside the other loops.
        let entry = AuthWriteQueue.Entry(request: .init(name: name, claim: claim)) { result in
            let grant: Result<UserDirectory.Grant, HTTPError> = result.mapError { error in
                if let blocked = error as? UserDirectory.Blocked {
                    return HTTPError(.authBlocked, title: "Forbidden",
                                     detail: "this name's tokens were revoked by an admin; it is blocked until \(Timestamp.iso8601(milliseconds: blocked.until))")
                }
                logger.error("could not create user", ["error": "\(error)"])
                return routes.storageError(error)
            }
            context.complete(onLoop: {
                let grant = try grant.get()
                let issued = try tokens.issue(name: name, userID: grant.isSeparateIdentity ? grant.user.id : nil, now: grant.issuedAt)
                return .response(.json([
                    "name": .string(name), "jwt": .string(issued.token), "user_id": .string(grant.user.id),
                    "expires_at": .string(Timestamp.iso8601(milliseconds: issued.claims.expiresAt * 1000)),
                    "claim": .string(grant.claim),
                ]))
            })
        }
        authWrites.submit(entry, executor: executor, users: users, isLive: { liveUsers.contains($0) })
        return .pending
    }
}

/// `--auth-rate`: POST /auth per client address; above it, 429 with Retry-After before the route runs.
struct AuthRateLimitMiddleware: HTTPMiddleware {
    let limiter: AddressRateLimiter
    let metrics: ServerMetrics

    func request(_ request: HTTPRequest, _ exchange: HTTPExchange) -> HTTPResponse? {
        guard request.head.method == "POST", exchange.routePattern() == "/auth",
              let wait = limiter.check(exchange.clientAddress) else { return nil }
        metrics.rateLimited(.auth)
        exchange.nameRoute()  // counted under /auth, as when the route itself refused
        return HTTPError(.authRateLimited, title: "Too many requests",
                         detail: "too many token requests from your address; retry in \(wait) s",
                         headers: HTTPHeaders([("Retry-After", String(wait))])).response()
    }
}

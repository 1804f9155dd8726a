import ParlorCodec
import ParlorHTTP
import ParlorRooms

/// How routes keep the database off the event loops: what needs SQLite runs on the `DatabaseExecutor`'s threads
/// and answers through `RequestContext.complete`; what the caches answer stays on the loop, with no hop and no
/// closure to allocate.
extension Routes {
    /// What the loop can tell about a request's identity without the database.
    enum IdentityLookup {
        /// Decided on the loop: the identity, or nil when the request carries no token.
        case known(Authenticator.Identity?)
        /// The token's user is not cached: the write thread loads it, creating it on first use, and then runs the
        /// route again there, where it finds the user cached. The route returns `.pending` meanwhile.
        case loading
    }

    /// The request's identity, checked on the loop when the token's user is cached (or there is no token); 401 for a
    /// bad token. `route` is the calling route, asked for only when its user must be loaded first.
    func lookUpIdentity(_ request: HTTPRequest, _ context: RequestContext, rememberToken: Bool = true,
                        route: () -> RouteHandler) throws(HTTPError) -> IdentityLookup {
        let authenticator = self.authenticator
        switch try authenticator.resolve(request, remember: rememberToken) {
        case .decided(let identity):
            return .known(identity)
        case .needsUser(let claims):
            let route = route()
            executor.write {
                context.complete {
                    _ = try authenticator.load(claims)
                    return try route(request, context)
                }
            }
            return .loading
        }
    }

    /// The user as `GET /rooms` and `POST /rooms` want it: required in the `code` and `closed` access modes (401
    /// without a token), optional in `open`.
    func user(_ identity: Authenticator.Identity?) throws(HTTPError) -> User? {
        configuration.access != .open ? try Authenticator.require(identity).user : identity?.user
    }

    /// Runs `body`, which reads the database, on a read thread and answers with what it returns or throws.
    func onReader(_ context: RequestContext, _ body: @escaping @Sendable () throws -> RouteResult) -> RouteResult {
        executor.read { context.complete(body) }
        return .pending
    }

    /// Runs `body`, which writes the database, on the write thread and answers with what it returns or throws.
    func onWriter(_ context: RequestContext, _ body: @escaping @Sendable () throws -> RouteResult) -> RouteResult {
        executor.write { context.complete(body) }
        return .pending
    }
}

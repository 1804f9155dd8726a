import ParlorCodec
import ParlorHTTP
import ParlorRooms

/// How routes keep the database off the event loops: what needs SQLite runs on the `DatabaseExecutor`'s threads
/// and answers through `RequestContext.complete`; what the caches answer stays on the loop, with no hop.
extension Routes {
    /// Runs `next` with the request's user, as `GET /rooms` and `POST /rooms` want it: required in the `code` and
    /// `closed` access modes (401 without a token), optional in `open`.
    func withUser(_ request: HTTPRequest, _ context: RequestContext,
                  _ next: @escaping @Sendable (User?) throws -> RouteResult) throws -> RouteResult {
        let required = configuration.access != .open
        return try withIdentity(request, context) { identity throws(HTTPError) in
            required ? try Authenticator.require(identity).user : identity?.user
        } then: { try next($0) }
    }

    /// Runs `next` with the request's identity; 401 without a token.
    func withRequiredIdentity(_ request: HTTPRequest, _ context: RequestContext,
                              _ next: @escaping @Sendable (Authenticator.Identity) throws -> RouteResult) throws -> RouteResult {
        try withIdentity(request, context, { identity throws(HTTPError) in try Authenticator.require(identity) }, then: next)
    }

    /// Runs `next` with what `decide` makes of the request's identity. When the token's user is cached (or there is
    /// no token) that is decided here, on the loop; otherwise the user is loaded, and created on first use, on the
    /// write thread, and `next` runs there after it (it hands database work on to the right thread itself).
    private func withIdentity<Decided>(_ request: HTTPRequest, _ context: RequestContext,
                                       _ decide: @escaping @Sendable (Authenticator.Identity?) throws(HTTPError) -> Decided,
                                       then next: @escaping @Sendable (Decided) throws -> RouteResult) throws -> RouteResult {
        let authenticator = self.authenticator
        switch try authenticator.resolve(request) {
        case .decided(let identity):
            return try next(try decide(identity))
        case .needsUser(let claims):
            executor.write {
                context.complete { try next(try decide(try authenticator.load(claims))) }
            }
            return .pending
        }
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

import ParlorCodec
import ParlorLoop

/// One concern of answering requests (request ids, the access log, host and origin checks, CORS), composed by the
/// app into a chain in front of the router (`HTTPPipeline`).
///
/// Hummingbird's middleware is `(request, context, next) async -> response`; ours is split in three because a route
/// may answer later from another thread (`RouteResult.pending`) and its connection writes that answer on its loop:
/// - `request` runs in chain order before the route; returning a response answers the request and the rest of the
///   chain and the route do not run (returning nil is calling `next`);
/// - `response` sees every answer before it is written, in reverse chain order, however it came about: a route's,
///   now or later, an earlier middleware's refusal, or the connection's own (a parse error, a timeout, a connection
///   cap), so headers such as X-Request-Id are on all of them;
/// - `responded` hears, in reverse chain order, that an answer (or a 101 upgrade) has been handed to the connection.
public protocol HTTPMiddleware: Sendable {
    func request(_ request: HTTPRequest, _ exchange: HTTPExchange) -> HTTPResponse?
    func response(_ response: inout HTTPResponse, _ exchange: HTTPExchange)
    func responded(status: Int, bytes: Int, _ exchange: HTTPExchange)
}

extension HTTPMiddleware {
    public func request(_ request: HTTPRequest, _ exchange: HTTPExchange) -> HTTPResponse? { nil }
    public func response(_ response: inout HTTPResponse, _ exchange: HTTPExchange) {}
    public func responded(status: Int, bytes: Int, _ exchange: HTTPExchange) {}
}

/// What the middleware and the connection know of one request and its answer, on the connection's loop (or the
/// test's thread, through `HTTPPipeline.respond`). A class: the connection keeps it with the request in flight while
/// the middleware and a route that answers at once fill it in, so it is shared, not copied field by field (a copy
/// per step cost each request more than the rest of the chain). Confined to one thread, so not Sendable.
public final class HTTPExchange {
    public let connection: HTTPConnectionFacts
    /// The request's head; nil for an answer to bytes that never made a request (a parse error, a timeout).
    public let head: HTTPRequestHead?
    /// "-" when there is no request.
    public let method: String
    public let path: String
    /// The client's address: the peer's, or behind a trusted proxy the one it forwarded.
    public let clientAddress: String
    /// Behind a trusted proxy, the host and scheme it forwarded; nil when none did.
    public let forwardedHost: String?
    public let forwardedScheme: String?
    /// MonotonicClock nanoseconds when the request was read.
    public let startedAt: UInt64
    /// Set by `RequestIDMiddleware`; empty until then.
    public var requestID = ""
    /// The route pattern for parlor_requests_total, once known.
    public var route = "unmatched"
    let router: Router
    /// Whether requests are counted, so route labels are worth finding for answers the router did not give.
    let countsRoutes: Bool
    /// Whether the route set headers besides Content-Type, so the middleware's must replace rather than append.
    var replacesHeaders = false

    init(connection: HTTPConnectionFacts, head: HTTPRequestHead?, method: String, path: String, clientAddress: String,
         forwardedHost: String? = nil, forwardedScheme: String? = nil, startedAt: UInt64, router: Router, countsRoutes: Bool) {
        self.connection = connection
        self.head = head
        self.method = method
        self.path = path
        self.clientAddress = clientAddress
        self.forwardedHost = forwardedHost
        self.forwardedScheme = forwardedScheme
        self.startedAt = startedAt
        self.router = router
        self.countsRoutes = countsRoutes
    }

    /// The request's own header `name`; nil without a request.
    public func header(_ name: String) -> String? { head?.headers[name] }

    /// Labels the answer with the pattern of the first route whose path matches, whatever its method: for an
    /// answer about a known route that the router did not give (a preflight, a refused upgrade, a 405).
    public func nameRoute() {
        if countsRoutes, let pattern = router.pattern(for: path) { route = pattern }
    }

    /// The pattern of the route the router will give this request, or nil for a 404 or 405.
    public func routePattern() -> String? {
        guard case .success(let (route, _)) = router.match(method: method, path: path) else { return nil }
        return route.pattern
    }

    /// Methods the request's path accepts (for OPTIONS and Allow); empty when the path is unknown.
    public func allowedMethods() -> [String] { router.allowedMethods(path: path) }

    /// Sets a header the server owns: appended, or replacing the route's own when it set headers besides
    /// Content-Type (routes set Content-Type, now and then Link or Retry-After; appending saves a search per header).
    public func set(_ name: String, _ value: String, in response: inout HTTPResponse) {
        if replacesHeaders { response.headers.replaceOrAdd(name, value) } else { response.headers.add(name, value) }
    }
}

/// One connection's facts, shared by its requests' exchanges; it lives on the connection's loop.
public final class HTTPConnectionFacts {
    /// The TCP peer, `ip:port`, and its address alone.
    public let peer: String
    public let peerIP: String
    /// The connection's loop; nil for `HTTPPipeline.respond`, which has none.
    public let loop: EventLoop?
    /// The access log's `client` and `peer` fields and the client address they were written for: kept while the
    /// client stays the same (always, unless a trusted proxy forwards several clients on one connection).
    var loggedAddress: (client: String, fields: [UInt8])?

    public init(peer: String, peerIP: String, loop: EventLoop?) {
        self.peer = peer
        self.peerIP = peerIP
        self.loop = loop
    }
}

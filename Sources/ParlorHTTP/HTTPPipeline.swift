import ParlorCodec
import ParlorLoop

/// The middleware chain in front of the router: what a connection runs for each request, and what
/// `respond(to:)` runs without one. The app decides the chain and its order.
public struct HTTPPipeline: Sendable {
    public let middleware: [any HTTPMiddleware]
    public let router: Router

    public init(middleware: [any HTTPMiddleware], router: Router) {
        self.middleware = middleware
        self.router = router
    }

    /// Runs the request halves in order, then the route: a middleware's refusal, the router's 404 or 405, or what
    /// the route returned or threw. A `.pending` route answers later through `responder`.
    func handle(_ request: HTTPRequest, _ exchange: HTTPExchange, responder: ResponseSink) -> Result<RouteResult, any Error> {
        // By index, not `for step in middleware`: that copies each existential (a retain and a release a step, three
        // passes a request); a subscript call opens it in place.
        for index in middleware.indices {
            if let response = middleware[index].request(request, exchange) { return .success(.response(response)) }
        }
        switch router.match(method: request.head.method, path: request.head.path) {
        case .failure(let error):
            // A 405 names a known route; a 404 stays "unmatched".
            if error.status == 405 { exchange.nameRoute() }
            return .success(.response(error.response()))
        case .success(let (route, parameters)):
            exchange.route = route.pattern
            let context = RequestContext(peerIP: exchange.connection.peerIP, clientAddress: exchange.clientAddress,
                                         requestID: exchange.requestID, pathParameters: parameters, responder: responder)
            do {
                return .success(try route.handler(request, context))
            } catch {
                return .failure(error)
            }
        }
    }

    /// Makes `response` what is written: the framing headers (Date, Content-Type, Content-Length), then the
    /// response halves in reverse order, then `Connection: close` when the connection ends after it.
    func finalize(_ response: inout HTTPResponse, _ exchange: HTTPExchange, keepAlive: Bool) {
        let hasContentType = response.headers.contains("Content-Type")
        exchange.replacesHeaders = response.headers.count > (hasContentType ? 1 : 0)
        // At most eight more (Date, Content-Type, Content-Length, three for CORS, X-Request-Id, Connection): one
        // allocation, not a reallocation at the second and fourth field (a route's headers start empty or with one).
        response.headers.reserveCapacity(response.headers.count + 8)
        exchange.set("Date", HTTPDateCache.current(), in: &response)
        if !hasContentType {
            response.headers.add("Content-Type", response.body.isEmpty ? "text/plain" : "application/json; charset=utf-8")
        }
        exchange.set("Content-Length", String(response.body.count), in: &response)
        for index in middleware.indices.reversed() { middleware[index].response(&response, exchange) }
        if !keepAlive { exchange.set("Connection", "close", in: &response) }
    }

    /// Makes a streamed response's head what is written: as `finalize`, but with no Content-Length; the body is
    /// chunked (HTTP/1.1) or ends with the connection (HTTP/1.0), which closes after it either way.
    func finalizeStream(_ response: inout HTTPResponse, _ exchange: HTTPExchange, chunked: Bool, contentLength: Int? = nil) {
        exchange.replacesHeaders = true
        exchange.set("Date", HTTPDateCache.current(), in: &response)
        if !response.headers.contains("Content-Type") { response.headers.add("Content-Type", "application/octet-stream") }
        response.headers.remove("Content-Length")
        if let contentLength { exchange.set("Content-Length", String(contentLength), in: &response) }
        if chunked { exchange.set("Transfer-Encoding", "chunked", in: &response) }
        for index in middleware.indices.reversed() { middleware[index].response(&response, exchange) }
        exchange.set("Connection", "close", in: &response)
    }

    /// Tells the middleware, in reverse order, that the answer went to the connection.
    func responded(status: Int, bytes: Int, _ exchange: HTTPExchange) {
        for index in middleware.indices.reversed() { middleware[index].responded(status: status, bytes: bytes, exchange) }
    }
}

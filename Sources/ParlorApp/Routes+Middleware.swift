import ParlorHTTP
import ParlorLoop

extension Routes {
    /// The middleware every request meets before its route, in this order: its id first, so every answer and log
    /// line carries it; the access log next, so it hears of every answer; then the refusals, from the cheapest
    /// checks of the request alone (an unmet `Expect`, a host this server is not, DNS rebinding) to CORS preflights
    /// and the WebSocket Origin check, which need the router's paths. The connection caps per address are counted
    /// by the connection itself, before any of these (`HTTPConnectionHandler`).
    static func middleware(_ http: HTTPServerConfiguration, logger: Logger) -> [any HTTPMiddleware] {
        [RequestIDMiddleware(),
         AccessLogMiddleware(logger: logger),
         ExpectationMiddleware(),
         HostAllowlistMiddleware(http.allowedHosts),
         CORSMiddleware(allowedOrigins: http.corsAllowedOrigins),
         WebSocketOriginMiddleware(allowedOrigins: http.corsAllowedOrigins, publicURL: http.publicURL)]
    }

    /// The main listener's middleware and routes: the chain above, then the `--auth-rate` limit, checked last, just
    /// before its route would run. (`--room-create-rate` stays in POST /rooms: it counts only requests whose token
    /// passed, so a 401 comes before a 429.)
    func pipeline() -> HTTPPipeline {
        var middleware = Self.middleware(configuration.http, logger: logger)
        if let authLimiter { middleware.append(AuthRateLimitMiddleware(limiter: authLimiter, metrics: rooms.metrics)) }
        return HTTPPipeline(middleware: middleware, router: router())
    }
}

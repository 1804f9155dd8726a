import ParlorHTTP
import ParlorLoop

extension Routes {
    /// The middleware every request meets before its route, in this order: its id first, so every answer and log
    /// line carries it; the access log next, so it hears of every answer; then the refusals, from the cheapest
    /// checks of the request alone (an unmet `Expect`, a host this server is not, DNS rebinding) to CORS preflights
    /// and the WebSocket Origin check, which need the router's paths. The connection caps per address are counted
    /// by the connection itself, before any of these (`HTTPConnectionHandler`); the rate limits per address, by
    /// the routes they guard.
    static func middleware(_ http: HTTPServerConfiguration, logger: Logger) -> [any HTTPMiddleware] {
        [RequestIDMiddleware(),
         AccessLogMiddleware(logger: logger),
         ExpectationMiddleware(),
         HostAllowlistMiddleware(http.allowedHosts),
         CORSMiddleware(allowedOrigins: http.corsAllowedOrigins),
         WebSocketOriginMiddleware(allowedOrigins: http.corsAllowedOrigins, publicURL: http.publicURL)]
    }

    /// The main listener's middleware and routes.
    func pipeline() -> HTTPPipeline {
        HTTPPipeline(middleware: Self.middleware(configuration.http, logger: logger), router: router())
    }
}

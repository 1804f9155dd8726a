import ParlorCodec
import ParlorHTTP
import ParlorLoop
import ParlorMetrics

/// GET /metrics, and the --metrics-address listener that serves it without authentication.
enum MetricsEndpoint {
    /// Gathers the per-loop request counts without blocking this loop, then answers in the Prometheus text format.
    static func scrape(_ metrics: ServerMetrics, _ context: RequestContext) -> RouteResult {
        metrics.collectRequests { requests in
            let text = metrics.exposition(requests: requests)
            context.respond(HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", MetricsText.contentType)]),
                                         body: Array(text.utf8)))
        }
        return .pending
    }

    /// Only /metrics and /healthz: whoever reaches this port learns how busy the server is, never its data.
    static func listenerRouter(_ metrics: ServerMetrics, health: @escaping RouteHandler) -> Router {
        Router { routes in
            routes.get("/metrics") { _, context in scrape(metrics, context) }
            routes.get("/healthz", health)
        }
    }

    /// A second HTTP server on the same event loops, plain HTTP, bound to `address`. Its own connections and
    /// requests are not counted, so scraping does not change what it reports.
    static func startListener(_ address: (host: String, port: Int), main: HTTPServerConfiguration, group: EventLoopGroup,
                              router: Router, logger: Logger) throws -> HTTPServer {
        var configuration = main
        configuration.host = address.host
        configuration.port = address.port
        configuration.tlsCertificatePath = nil
        configuration.tlsPrivateKeyPath = nil
        configuration.corsAllowedOrigins = []
        let pipeline = HTTPPipeline(middleware: Routes.middleware(configuration, logger: logger), router: router)
        return try HTTPServer(configuration: configuration, group: group, pipeline: pipeline, logger: logger)
    }
}

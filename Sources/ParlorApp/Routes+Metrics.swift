import ParlorCodec
import ParlorHTTP

extension Routes {
    /// GET /metrics on the main listener, for the admin token only: the numbers tell anyone how busy the server is
    /// and which limits are being hit. Registered only with --admin-token (see registerAdminRoutes); Prometheus
    /// without the token scrapes the --metrics-address listener instead.
    func metrics(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        try requireAdmin(request)
        return MetricsEndpoint.scrape(rooms.metrics, context)
    }
}

import ParlorCodec
import ParlorProtocol

/// CORS: answers preflights (`OPTIONS`, for any path the router knows, or `*`) with the methods the path accepts,
/// and lets pages of the allowed origins read every answer (`Access-Control-Allow-Origin`, the headers they may
/// read, `Vary: Origin`).
public struct CORSMiddleware: HTTPMiddleware {
    /// Origins allowed besides the server's own; "*" allows any. Empty: same origin only.
    let allowedOrigins: [String]

    public init(allowedOrigins: [String]) { self.allowedOrigins = allowedOrigins }

    public func request(_ request: HTTPRequest, _ exchange: HTTPExchange) -> HTTPResponse? {
        guard request.head.method == "OPTIONS" else { return nil }
        exchange.nameRoute()
        let methods = exchange.allowedMethods()
        guard !methods.isEmpty || request.head.target == "*" else {
            return HTTPError.notFound(.httpNotFound, "no route for \(request.head.path)").response()
        }
        var headers = HTTPHeaders()
        let allow = Router.allowHeader(methods)
        headers.add("Allow", allow)
        headers.add("Access-Control-Allow-Methods", allow)
        headers.add("Access-Control-Allow-Headers", request.head.headers["Access-Control-Request-Headers"] ?? "Authorization, Content-Type")
        headers.add("Access-Control-Max-Age", "600")
        return HTTPResponse(status: 204, headers: headers)
    }

    public func response(_ response: inout HTTPResponse, _ exchange: HTTPExchange) {
        guard let origin = allowedOrigin(for: exchange.header("Origin")) else { return }
        exchange.set("Access-Control-Allow-Origin", origin, in: &response)
        exchange.set("Access-Control-Expose-Headers", "Link, Retry-After, X-Request-Id", in: &response)
        if origin != "*" { exchange.set("Vary", "Origin", in: &response) }
    }

    /// The Access-Control-Allow-Origin value for a request's Origin, or nil when it is not allowed.
    func allowedOrigin(for origin: String?) -> String? {
        guard let origin else { return nil }
        if allowedOrigins.contains("*") { return "*" }
        return allowedOrigins.contains(origin) ? origin : nil
    }
}

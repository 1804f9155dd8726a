import ParlorCodec
import ParlorProtocol

/// A WebSocket upgrade proceeds from no Origin (not a browser), the request's own host, `--public-url`'s origin or a
/// configured origin; any other is answered 403 before the route runs, so a page of another site does not even reach
/// token checks. Browsers let any page open a WebSocket anywhere, so this is the only guard against another site
/// using a visitor's network position (or cookies, some day) to talk to us.
public struct WebSocketOriginMiddleware: HTTPMiddleware {
    let cors: CORSMiddleware
    let publicURL: PublicURL?

    public init(allowedOrigins: [String], publicURL: PublicURL?) {
        cors = CORSMiddleware(allowedOrigins: allowedOrigins)
        self.publicURL = publicURL
    }

    public func request(_ request: HTTPRequest, _ exchange: HTTPExchange) -> HTTPResponse? {
        let headers = request.head.headers
        guard headers["Upgrade"]?.lowercased() == "websocket",
              !allowed(headers["Origin"], host: exchange.forwardedHost ?? headers["Host"], scheme: exchange.forwardedScheme) else {
            return nil
        }
        exchange.nameRoute()
        return HTTPError(.httpOriginNotAllowed, title: "Origin not allowed",
                         detail: "WebSocket connections are accepted from this server's own pages and the configured origins").response()
    }

    /// Behind a trusted proxy `host` and `scheme` are the forwarded ones; `scheme` is nil when no proxy said it, and
    /// then any scheme of the Origin is taken as ours (TLS may end at a proxy that does not say so).
    func allowed(_ origin: String?, host: String?, scheme: String? = nil) -> Bool {
        guard let origin else { return true }
        if let host, Self.isSameOrigin(origin, host: host, scheme: scheme) { return true }
        if let url = publicURL, Self.isSameOrigin(origin, host: url.authority, scheme: url.scheme) { return true }
        return cors.allowedOrigin(for: origin) != nil
    }

    /// `http://h:p` or `https://h:p` against the Host header `h:p`, default ports and case ignored.
    static func isSameOrigin(_ origin: String, host: String, scheme: String? = nil) -> Bool {
        let origin = origin.lowercased()
        if let scheme, !origin.hasPrefix(scheme + "://") { return false }
        let authority: Substring
        let defaultPort: String
        if origin.hasPrefix("http://") {
            authority = origin.dropFirst(7)
            defaultPort = ":80"
        } else if origin.hasPrefix("https://") {
            authority = origin.dropFirst(8)
            defaultPort = ":443"
        } else {
            return false
        }
        func normalized<S: StringProtocol>(_ value: S) -> Substring {
            let text = Substring(value)
            return text.hasSuffix(defaultPort) ? text.dropLast(defaultPort.count) : text
        }
        return !authority.isEmpty && normalized(authority) == normalized(host.lowercased())
    }
}

import ParlorCodec
import ParlorProtocol

/// DNS rebinding: a page on `evil.example`, its name now pointing at this server, sends same-origin requests with
/// `Host: evil.example`. Requests that act (WebSocket upgrades, POST/PUT/PATCH/DELETE) must name a host the server
/// was given (`HostAllowlist`), or are answered 421; reads stay open, since tokens are bearer headers a rebound page
/// does not have.
public struct HostAllowlistMiddleware: HTTPMiddleware {
    static let stateChangingMethods: Set<String> = ["POST", "PUT", "PATCH", "DELETE"]
    let allowlist: HostAllowlist

    public init(_ allowlist: HostAllowlist) { self.allowlist = allowlist }

    /// Checks the forwarded host behind a trusted proxy. A request without a Host (HTTP/1.0) comes from no browser
    /// and passes.
    public func request(_ request: HTTPRequest, _ exchange: HTTPExchange) -> HTTPResponse? {
        let head = request.head
        guard !allowlist.allowsAnyHost,
              Self.stateChangingMethods.contains(head.method) || head.headers.contains("Upgrade"),
              let host = exchange.forwardedHost ?? head.headers["Host"], !allowlist.allows(host) else { return nil }
        return HTTPError(.httpHostNotAllowed, title: "Host not allowed",
                         detail: "\"\(host.prefix(100))\" is not a name of this server; it answers to IP addresses, localhost, "
                             + "its own host name and the names given by --public-url and --allowed-hosts").response()
    }
}

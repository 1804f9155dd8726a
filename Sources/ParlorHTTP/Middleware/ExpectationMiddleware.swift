import ParlorCodec
import ParlorProtocol

/// `Expect` (RFC 9110 §10.1.1): `100-continue` is the only expectation this server meets; any other is answered 417.
/// (The `100 Continue` itself, sent before the body arrives, is the connection's: `HTTPConnectionHandler+Expect`.)
public struct ExpectationMiddleware: HTTPMiddleware {
    public init() {}

    public func request(_ request: HTTPRequest, _ exchange: HTTPExchange) -> HTTPResponse? {
        Self.unmetExpectation(request.head)?.response()
    }

    /// The 417 for an expectation other than `100-continue`.
    static func unmetExpectation(_ head: HTTPRequestHead) -> HTTPError? {
        guard head.headers.contains("Expect"), head.headers.tokens("Expect") != ["100-continue"] else { return nil }
        return HTTPError(.httpExpectationFailed, title: "Expectation failed",
                         detail: "the only expectation this server meets is \"Expect: 100-continue\"")
    }
}

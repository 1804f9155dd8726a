import ParlorCodec

/// Gives each request its id (`RequestID`): the route sees it in `RequestContext.requestID`, the client in
/// `X-Request-Id` and in the `request_id` of a JSON error body, the access log in its `request_id` field. An answer
/// given before this middleware ran (a parse error, a connection cap) gets one too, from the request's own header
/// when there is a request.
public struct RequestIDMiddleware: HTTPMiddleware {
    public init() {}

    public func request(_ request: HTTPRequest, _ exchange: HTTPExchange) -> HTTPResponse? {
        exchange.requestID = RequestID.make(incoming: request.head.headers["X-Request-Id"])
        return nil
    }

    public func response(_ response: inout HTTPResponse, _ exchange: HTTPExchange) {
        if exchange.requestID.isEmpty { exchange.requestID = RequestID.make(incoming: exchange.header("X-Request-Id")) }
        exchange.set("X-Request-Id", exchange.requestID, in: &response)
        Self.addRequestID(exchange.requestID, toErrorBody: &response)
    }

    /// Adds `"request_id"` to a JSON error body `{"code",…}`; the id's characters need no escaping.
    static func addRequestID(_ id: String, toErrorBody response: inout HTTPResponse) {
        guard response.status >= 400 else { return }
        let prefix: [UInt8] = Array(#"{"code":"#.utf8)
        guard response.body.count > prefix.count, response.body.last == 0x7D, response.body.starts(with: prefix) else { return }
        response.body.removeLast()
        response.body.append(contentsOf: #","request_id":""#.utf8)
        response.body.append(contentsOf: id.utf8)
        response.body.append(contentsOf: #""}"#.utf8)
        response.headers.replaceOrAdd("Content-Length", String(response.body.count))
    }
}

import Foundation
import ParlorCodec
import ParlorLoop

/// Requests through the whole chain and router without a socket, for tests (as HummingbirdTesting's router test
/// framework does): the answer is what a connection would write, headers and all.
extension HTTPPipeline {
    /// Answers `request` from `peer` as a connection from there would (forwarding headers read only from a peer in
    /// `trustedProxies`), waiting up to `timeout` for a route that answers later; nil when it did not answer in time.
    /// A WebSocket upgrade is answered with its 101 or the handshake's refusal; no WebSocket follows.
    public func respond(to request: HTTPRequest, from peer: (ip: String, port: Int) = ("127.0.0.1", 50000),
                        trustedProxies: TrustedProxies = .none, timeout: Duration = .seconds(10)) -> HTTPResponse? {
        let forwarded = ForwardedRequest.resolve(peerIP: peer.ip, headers: request.head.headers, trusted: trustedProxies)
        let peerText = peer.ip.contains(":") ? "[\(peer.ip)]:\(peer.port)" : "\(peer.ip):\(peer.port)"
        let exchange = HTTPExchange(connection: HTTPConnectionFacts(peer: peerText, peerIP: peer.ip, loop: nil),
                                    head: request.head, method: request.head.method, path: request.head.path,
                                    clientAddress: forwarded.clientIP, forwardedHost: forwarded.host,
                                    forwardedScheme: forwarded.scheme, startedAt: MonotonicClock.now(), router: router,
                                    countsRoutes: true)
        let answer = LocalAnswer()
        var result = handle(request, exchange, responder: ResponseSink(.local(answer)))
        if case .success(.pending) = result {
            guard let late = answer.wait(timeout: timeout) else { return nil }
            result = late
        }
        var response: HTTPResponse
        switch result {
        case .success(.response(let answered)): response = answered
        case .success(.pending): return nil  // `LocalAnswer` never holds one
        case .success(.upgrade):
            do {
                let accept = try WebSocketHandshakeValidator.acceptValue(for: request.head)
                responded(status: 101, bytes: 0, exchange)
                return HTTPResponse(status: 101, headers: HTTPHeaders([("Upgrade", "websocket"), ("Connection", "Upgrade"),
                                                                       ("Sec-WebSocket-Accept", accept)]))
            } catch {
                response = error.response()
            }
        case .success(.stream(let stream)):
            // The head alone: without a connection there is no body to stream, and the producer never starts.
            var head = HTTPResponse(status: stream.status, headers: stream.headers)
            finalizeStream(&head, exchange, chunked: request.head.versionMinor >= 1 && stream.contentLength == nil,
                           contentLength: stream.contentLength)
            responded(status: head.status, bytes: 0, exchange)
            return head
        case .failure(let error as HTTPError): response = error.response()
        case .failure: response = HTTPError.internalError().response()
        }
        finalize(&response, exchange, keepAlive: request.head.keepAlive)
        responded(status: response.status, bytes: response.body.count, exchange)
        return response
    }
}

/// The first late answer to a request sent by `HTTPPipeline.respond`, and a wait for it.
final class LocalAnswer: @unchecked Sendable {  // `result` is only touched with `condition` locked
    private let condition = NSCondition()
    private var result: Result<RouteResult, any Error>?

    func send(_ result: Result<RouteResult, any Error>) {
        if case .success(.pending) = result { return }
        condition.lock()
        defer { condition.unlock() }
        guard self.result == nil else { return }
        self.result = result
        condition.broadcast()
    }

    func wait(timeout: Duration) -> Result<RouteResult, any Error>? {
        let deadline = Date().addingTimeInterval(Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        condition.lock()
        defer { condition.unlock() }
        while result == nil, condition.wait(until: deadline) {}
        return result
    }
}

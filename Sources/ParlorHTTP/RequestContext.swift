import ParlorCodec
import ParlorLoop

/// What a handler knows about a request beyond its bytes, and how it answers later.
public struct RequestContext: Sendable {
    /// The TCP peer's address (a proxy's, behind one).
    public let peerIP: String
    /// The client's address: the peer's, or behind a trusted proxy the one it forwarded. Limits count this.
    public let clientAddress: String
    /// This request's id, echoed as X-Request-Id and in error bodies and the access log.
    public let requestID: String
    public let pathParameters: [String: String]
    let responder: ResponseSink

    public func parameter(_ name: String) -> String { pathParameters[name] ?? "" }

    /// Completes a `.pending` route from any thread.
    public func respond(_ response: HTTPResponse) { responder.send(response) }
    public func respond(_ error: HTTPError) { responder.send(error.response()) }
}

/// Delivers a late response to its connection's loop; a connection that has gone away drops it.
struct ResponseSink: Sendable {
    let connection: ConnectionHandle
    let requestNumber: UInt64

    func send(_ response: HTTPResponse) {
        let requestNumber = self.requestNumber
        if let live = connection.resolve(), let handler = live.handler as? HTTPConnectionHandler {
            handler.complete(requestNumber: requestNumber, response: response)
            return
        }
        connection.withConnection { live in
            (live.handler as? HTTPConnectionHandler)?.complete(requestNumber: requestNumber, response: response)
        }
    }
}

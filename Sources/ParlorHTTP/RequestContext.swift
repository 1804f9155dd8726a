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

    /// Completes a `.pending` route from any thread with what a handler returns or throws, treated as if the route
    /// had returned it at once: a response, an upgrade (the handshake is checked then, the 101 written on the loop),
    /// or an error, answered with its status (any other error: logged, 500). `.pending` leaves the request waiting
    /// for a later `respond` or `complete`.
    public func complete(_ body: () throws -> RouteResult) {
        let result: Result<RouteResult, any Error>
        do {
            result = .success(try body())
        } catch {
            result = .failure(error)
        }
        if case .success(.pending) = result { return }
        responder.send(result)
    }

    /// Like `complete`, but `body` runs on the connection's loop: for the part of a late answer that needs no
    /// database (signing a token once its user is written), so it does not hold a database thread.
    public func complete(onLoop body: @escaping @Sendable () throws -> RouteResult) { responder.send(body) }
}

/// Delivers a late response to its connection's loop (a connection that has gone away drops it), or to the
/// `HTTPPipeline.respond` waiting for it.
struct ResponseSink: Sendable {
    enum Target: Sendable {
        case connection(ConnectionHandle, requestNumber: UInt64)
        case local(LocalAnswer)
    }

    let target: Target

    init(_ target: Target) { self.target = target }

    func send(_ response: HTTPResponse) {
        switch target {
        case .local(let answer): answer.send(.success(.response(response)))
        case .connection(let connection, let requestNumber):
            if let live = connection.resolve(), let handler = live.handler as? HTTPConnectionHandler {
                handler.complete(requestNumber: requestNumber, response: response)
                return
            }
            connection.withConnection { live in
                (live.handler as? HTTPConnectionHandler)?.complete(requestNumber: requestNumber, response: response)
            }
        }
    }

    /// Always a task on the loop, even from the loop itself: the route has returned `.pending` by the time it runs.
    func send(_ result: Result<RouteResult, any Error>) {
        switch target {
        case .local(let answer): answer.send(result)
        case .connection(let connection, let requestNumber):
            connection.withConnection { live in
                (live.handler as? HTTPConnectionHandler)?.complete(requestNumber: requestNumber, result: result)
            }
        }
    }

    /// Runs `body` as a task on the loop (without a connection, here and now) and completes the request with what it
    /// returns or throws.
    func send(_ body: @escaping @Sendable () throws -> RouteResult) {
        switch target {
        case .local(let answer): answer.send(Self.run(body))
        case .connection(let connection, let requestNumber):
            connection.withConnection { live in
                guard let handler = live.handler as? HTTPConnectionHandler else { return }
                handler.complete(requestNumber: requestNumber, result: Self.run(body))
            }
        }
    }

    private static func run(_ body: () throws -> RouteResult) -> Result<RouteResult, any Error> {
        do {
            return .success(try body())
        } catch {
            return .failure(error)
        }
    }
}

import ParlorCodec
import ParlorLoop
import ParlorMetrics
import ParlorProtocol

/// Speaks HTTP/1.1 on one connection: parses requests as bytes arrive, counts the connection against the caps per
/// address, runs each request through the app's `HTTPPipeline` (middleware, then router), writes the answers
/// strictly in order (a pipelined request waits until the one before it is answered), enforces header, body and idle
/// timeouts, and hands the connection over to a WebSocket when a route upgrades it.
final class HTTPConnectionHandler: ConnectionHandler {
    /// Strong on purpose (a failed write closes the connection mid-call); Connection.close clears its handler,
    /// which breaks the cycle.
    let connection: Connection
    let context: HTTPServerContext
    var parser: HTTPRequestParser
    private var requestCount: UInt64 = 0
    var inFlight: InFlight?
    /// The request in flight while its route's answer is pending.
    private var pendingRequest: HTTPRequest?
    private var isProcessing = false
    private var closeWhenDone = false
    var upgraded = false
    /// Responses the peer has not read are over the limit: no more requests are answered or read until they drain.
    private var outputBlocked = false

    // One timer per connection, re-armed lazily: it checks the deadline that applies when it fires.
    var timer: TimerID?
    var timerDeadline: UInt64 = 0
    var headStartedAt: UInt64?
    var bodyStartedAt: UInt64?
    var lastActivity = MonotonicClock.now()

    /// Connection-cap keys this connection counts under: its TCP peer (a trusted proxy under a key of its own) and,
    /// behind a proxy, the forwarded client address of its first request.
    private var countedAddresses = ConnectionCapKeys()
    /// The peer's canonical address when it is a trusted proxy (nil otherwise), parsed once per connection.
    private lazy var trustedProxyAddress: String? = IPAddress(connection.peerIP)
        .flatMap { context.configuration.trustedProxies.contains($0) ? $0.description : nil }
    private var peerIsTrustedProxy: Bool { trustedProxyAddress != nil }
    private var forwardedAddressCounted = false
    /// What every exchange on this connection shares (its peer, its loop, the access log's cached fields).
    private lazy var facts = HTTPConnectionFacts(peer: connection.peer, peerIP: connection.peerIP, loop: connection.loop)

    struct InFlight {
        let number: UInt64
        let headOnly: Bool
        let keepAlive: Bool
        var exchange: HTTPExchange
    }

    init(connection: Connection, context: HTTPServerContext) {
        self.connection = connection
        self.context = context
        parser = HTTPRequestParser(limits: context.configuration.limits)
        armTimer()
    }

    // MARK: ConnectionHandler

    func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer) {
        connection.loop.assertInLoop()
        lastActivity = MonotonicClock.now()
        parser.append(bytes)
        processRequests()
        updateReading()
    }

    func connectionDidReachEnd(_ connection: Connection) {}

    func connectionOutputDidDrain(_ connection: Connection) {
        guard outputBlocked else { return }
        outputBlocked = false
        processRequests()
        updateReading()
    }

    func connectionDidClose(_ connection: Connection) {
        connection.loop.assertInLoop()
        if let timer { connection.loop.cancelTimer(timer) }
        timer = nil
        if !upgraded {
            context.metrics?.httpConnections.subtract()
            context.connectionClosed(releasing: countedAddresses)
        }
    }

    /// Counts the new connection under its peer's address; false when that is over its cap. A trusted proxy's
    /// connections carry many clients, so they count under a key of their own with a larger cap.
    func admitPeer() -> Bool {
        connection.loop.assertInLoop()
        let limit = context.configuration.maxConnectionsPerIP
        if peerIsTrustedProxy {
            let key = "proxy " + connection.peerIP
            countedAddresses.append(key)
            return context.admit(key, limit: limit * HTTPServerConfiguration.proxyConnectionFactor)
        }
        countedAddresses.append(connection.peerIP)
        return context.admit(connection.peerIP, limit: limit)
    }

    /// The address already has its maximum of connections: say so and close.
    func refuseTooManyConnections() {
        connection.loop.assertInLoop()
        context.metrics?.rateLimited(.connections)
        failAndClose(Self.tooManyConnections)
    }

    private static let tooManyConnections = HTTPError(
        .httpTooManyConnections, title: "Too many connections",
        detail: "too many open connections from your address", headers: HTTPHeaders([("Retry-After", "1")]))

    /// Shutdown: close now if idle, otherwise after the response in flight.
    func closeWhenIdle() {
        connection.loop.assertInLoop()
        closeWhenDone = true
        if inFlight == nil { connection.close() }
    }

    // MARK: Requests

    private func processRequests() {
        guard !isProcessing else { return }
        isProcessing = true
        defer { isProcessing = false }
        while inFlight == nil, !outputBlocked, connection.isOpen, !upgraded {
            let request: HTTPRequest?
            do {
                request = try parser.next()
            } catch {
                failAndClose(HTTPError(error))
                return
            }
            guard let request else {
                if parser.isInsideBody {
                    headStartedAt = nil
                    if bodyStartedAt == nil {
                        bodyStartedAt = MonotonicClock.now()
                        armTimer()
                        if let head = parser.headAwaitingBody { answerExpectation(before: head) }
                    }
                } else if parser.isInsideHead, headStartedAt == nil {
                    headStartedAt = MonotonicClock.now()
                    armTimer()  // the header deadline is usually earlier than the idle one the timer waits for
                }
                return
            }
            headStartedAt = nil
            bodyStartedAt = nil
            handle(request)
        }
    }

    private func handle(_ request: HTTPRequest) {
        requestCount += 1
        let head = request.head
        // Only a trusted proxy's headers are read; everyone else is the peer it is.
        let forwarded = trustedProxyAddress.map {
            ForwardedRequest.resolve(trustedPeer: $0, headers: head.headers, trusted: context.configuration.trustedProxies)
        } ?? ForwardedRequest(clientIP: connection.peerIP)
        if trustedProxyAddress == nil { warnIfForwarded(head.headers) }
        let flight = InFlight(number: requestCount, headOnly: head.method == "HEAD", keepAlive: head.keepAlive && !closeWhenDone,
                              exchange: HTTPExchange(connection: facts, head: head, method: head.method, path: head.path,
                                                     clientAddress: forwarded.clientIP, forwardedHost: forwarded.host,
                                                     forwardedScheme: forwarded.scheme, startedAt: MonotonicClock.now(),
                                                     router: context.pipeline.router, countsRoutes: context.metrics != nil))
        inFlight = flight

        if peerIsTrustedProxy, !forwardedAddressCounted {
            // The cap per client address, counted once the first request names the client behind the proxy.
            // A request with no forwarded address (a local client beside the proxy) counts as the peer's own.
            forwardedAddressCounted = true
            countedAddresses.append(forwarded.clientIP)
            if !context.admit(forwarded.clientIP, limit: context.configuration.maxConnectionsPerIP) {
                closeWhenDone = true
                context.metrics?.rateLimited(.connections)
                complete(requestNumber: flight.number, response: Self.tooManyConnections.response())
                return
            }
        }

        // The exchange is shared with `inFlight`: a route that answers from inside, on this thread, finds the id and
        // route label the middleware gave.
        let result = context.pipeline.handle(request, flight.exchange,
                                             responder: ResponseSink(.connection(connection.handle, requestNumber: flight.number)))
        finish(request, result, flight)
    }

    /// Acts on what a route returned or threw, at once or later (`complete(requestNumber:result:)`).
    private func finish(_ request: HTTPRequest, _ result: Result<RouteResult, any Error>, _ flight: InFlight) {
        switch result {
        case .success(.response(let response)): complete(requestNumber: flight.number, response: response)
        case .success(.pending):
            // Kept for an upgrade decided later, unless a `respond` on this thread has already answered it.
            if inFlight?.number == flight.number { pendingRequest = request }
        case .success(.upgrade(let upgrade)): performUpgrade(request, upgrade, flight)
        case .success(.stream(let stream)): startStream(request, stream, flight)
        case .failure(let error as HTTPError): complete(requestNumber: flight.number, response: error.response())
        case .failure(let error):
            context.logger.error("handler failed", ["path": LogRedaction.path(request.head.path), "error": "\(error)",
                                                    "request_id": flight.exchange.requestID])
            complete(requestNumber: flight.number, response: HTTPError.internalError().response())
        }
    }

    /// Completes pending request `requestNumber` with a route's late result (ignored if that request is no longer
    /// the one in flight).
    func complete(requestNumber: UInt64, result: Result<RouteResult, any Error>) {
        connection.loop.assertInLoop()
        guard let flight = inFlight, flight.number == requestNumber, let request = pendingRequest, connection.isOpen else { return }
        pendingRequest = nil
        finish(request, result, flight)
    }

    /// Writes the response to request `requestNumber` (ignored if that request is no longer the one in flight).
    func complete(requestNumber: UInt64, response: HTTPResponse) {
        connection.loop.assertInLoop()
        guard let flight = inFlight, flight.number == requestNumber, connection.isOpen else { return }
        let keepAlive = flight.keepAlive && !closeWhenDone
        var response = response
        context.pipeline.finalize(&response, flight.exchange, keepAlive: keepAlive)
        connection.write(response.serialized(headOnly: flight.headOnly))
        context.pipeline.responded(status: response.status, bytes: response.body.count, flight.exchange)
        countRequest(flight.exchange, status: response.status)
        inFlight = nil
        pendingRequest = nil
        lastActivity = MonotonicClock.now()
        if !keepAlive {
            connection.closeAfterFlush()
            return
        }
        let limit = context.configuration.maxPendingResponseBytes
        if connection.pendingOutputBytes > limit {
            outputBlocked = true
            connection.notifyWhenOutputDrains(below: limit / 2)
        }
        armTimer()
        processRequests()
        updateReading()
    }

    /// Reads only while responses are going out and the unparsed input is bounded: a complete request (head and
    /// body at their limits) always fits, so stopping never waits for bytes that are not read.
    private func updateReading() {
        guard connection.isOpen, !upgraded else { return }
        let limits = context.configuration.limits
        let bufferLimit = limits.maxHeaderBytes + limits.maxBodyBytes + 64 * 1024
        connection.setReading(!outputBlocked && parser.bufferedByteCount < bufferLimit)
    }

    func failAndClose(_ error: HTTPError, method: String = "-", path: String = "-") {
        let flight = InFlight(number: requestCount + 1, headOnly: false, keepAlive: false,
                              exchange: HTTPExchange(connection: facts, head: nil, method: method, path: path,
                                                     clientAddress: connection.peerIP, startedAt: MonotonicClock.now(),
                                                     router: context.pipeline.router, countsRoutes: context.metrics != nil))
        requestCount += 1
        inFlight = flight
        complete(requestNumber: flight.number, response: error.response())
    }

    private func countRequest(_ exchange: HTTPExchange, status: Int) {
        context.metrics?.recordRequest(RequestKey(route: exchange.route, method: exchange.method, status: status), on: connection.loop)
    }

    // MARK: Streams

    /// Writes a streamed response's head and hands the connection to an `HTTPStreamConnection`, which writes the
    /// body as the producer sends it. A HEAD request gets the head alone and the connection goes on as before.
    private func startStream(_ request: HTTPRequest, _ stream: HTTPStreamResponse, _ flight: InFlight) {
        let chunked = request.head.versionMinor >= 1 && stream.contentLength == nil
        var head = HTTPResponse(status: stream.status, headers: stream.headers)
        context.pipeline.finalizeStream(&head, flight.exchange, chunked: chunked, contentLength: stream.contentLength)
        if flight.headOnly {
            head.headers.remove("Connection")
            connection.write(head.serialized(headOnly: true))
            context.pipeline.responded(status: head.status, bytes: 0, flight.exchange)
            countRequest(flight.exchange, status: head.status)
            inFlight = nil
            pendingRequest = nil
            if !flight.keepAlive || closeWhenDone {
                connection.closeAfterFlush()
                return
            }
            armTimer()
            processRequests()
            updateReading()
            return
        }
        connection.write(head.serialized())
        context.pipeline.responded(status: head.status, bytes: 0, flight.exchange)
        countRequest(flight.exchange, status: head.status)
        inFlight = nil
        pendingRequest = nil
        upgraded = true  // this handler is done with the connection: no timers, no more requests
        if let timer { connection.loop.cancelTimer(timer) }
        timer = nil
        guard connection.isOpen else { return }
        let handler = HTTPStreamConnection(connection: connection, context: context, response: stream, chunked: chunked,
                                           countedAddresses: countedAddresses)
        connection.handler = handler
        connection.setReading(true)
        stream.started(handler.writer)
        handler.start()
    }

    // MARK: Upgrade

    private func performUpgrade(_ request: HTTPRequest, _ upgrade: WebSocketUpgrade, _ flight: InFlight) {
        let accept: String
        do {
            accept = try WebSocketHandshakeValidator.acceptValue(for: request.head)
        } catch {
            complete(requestNumber: flight.number, response: error.response())
            return
        }
        var headers = HTTPHeaders()
        headers.add("Upgrade", "websocket")
        headers.add("Connection", "Upgrade")
        headers.add("Sec-WebSocket-Accept", accept)
        connection.write(HTTPResponse(status: 101, headers: headers).serialized())
        context.pipeline.responded(status: 101, bytes: 0, flight.exchange)
        countRequest(flight.exchange, status: 101)
        inFlight = nil
        upgraded = true
        context.metrics?.httpConnections.subtract()
        context.metrics?.webSocketConnections.add()
        if let timer { connection.loop.cancelTimer(timer) }
        timer = nil
        connection.setReading(true)  // it may have been paused for a full parser buffer; the WebSocket reads now
        let socket = WebSocketConnection(connection: connection, context: context)
        socket.countedAddresses = countedAddresses
        connection.handler = socket
        socket.start(delegate: upgrade.makeDelegate(socket, request), initialBytes: parser.takeRemainingBytes())
    }
}

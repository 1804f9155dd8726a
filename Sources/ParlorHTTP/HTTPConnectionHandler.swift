import ParlorCodec
import ParlorLoop
import ParlorMetrics
import ParlorProtocol

/// Speaks HTTP/1.1 on one connection: parses requests as bytes arrive, answers them strictly in order (a pipelined
/// request waits until the one before it is answered), enforces header and idle timeouts, and hands the connection
/// over to a WebSocket when a route upgrades it.
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
    /// `addressFields`' bytes and the client address they were written for.
    var loggedAddress: (client: String, fields: [UInt8])?

    struct InFlight {
        let number: UInt64
        let method: String
        let path: String
        /// The route pattern for parlor_requests_total, once the router has matched one.
        var route = "unmatched"
        let headOnly: Bool
        let keepAlive: Bool
        let origin: String?
        let startedAt: UInt64
        let requestID: String
        let clientIP: String
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
        let flight = InFlight(number: requestCount, method: head.method, path: head.path, headOnly: head.method == "HEAD",
                              keepAlive: head.keepAlive && !closeWhenDone, origin: head.headers["Origin"],
                              startedAt: MonotonicClock.now(), requestID: RequestID.make(incoming: head.headers["X-Request-Id"]),
                              clientIP: forwarded.clientIP)
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

        if let error = Self.unmetExpectation(head) ?? hostRefusal(head, forwardedHost: forwarded.host) {
            complete(requestNumber: flight.number, response: error.response())
            return
        }
        if head.method == "OPTIONS" {
            if context.metrics != nil, let pattern = context.router.pattern(for: head.path) { inFlight?.route = pattern }
            complete(requestNumber: flight.number, response: preflight(request))
            return
        }
        if head.headers["Upgrade"]?.lowercased() == "websocket",
           !context.webSocketOriginAllowed(head.headers["Origin"], host: forwarded.host ?? head.headers["Host"],
                                           scheme: forwarded.scheme) {
            // Refused before the route runs: a page of another site must not even reach token checks.
            if context.metrics != nil, let pattern = context.router.pattern(for: head.path) { inFlight?.route = pattern }
            complete(requestNumber: flight.number, response: HTTPError(
                .httpOriginNotAllowed, title: "Origin not allowed",
                detail: "WebSocket connections are accepted from this server's own pages and the configured origins").response())
            return
        }
        switch context.router.match(method: head.method, path: head.path) {
        case .failure(let error):
            // A 405 names a known route; a 404 stays "unmatched".
            if context.metrics != nil, error.status == 405, let pattern = context.router.pattern(for: head.path) {
                inFlight?.route = pattern
            }
            complete(requestNumber: flight.number, response: error.response())
        case .success(let (route, parameters)):
            inFlight?.route = route.pattern
            let requestContext = RequestContext(peerIP: connection.peerIP, clientAddress: forwarded.clientIP,
                                                requestID: flight.requestID, pathParameters: parameters,
                                                responder: ResponseSink(connection: connection.handle, requestNumber: flight.number))
            let result: Result<RouteResult, any Error>
            do {
                result = .success(try route.handler(request, requestContext))
            } catch {
                result = .failure(error)
            }
            finish(request, result, inFlight ?? flight)
        }
    }

    /// Acts on what a route returned or threw, at once or later (`complete(requestNumber:result:)`).
    private func finish(_ request: HTTPRequest, _ result: Result<RouteResult, any Error>, _ flight: InFlight) {
        switch result {
        case .success(.response(let response)): complete(requestNumber: flight.number, response: response)
        case .success(.pending):
            // Kept for an upgrade decided later, unless a `respond` on this thread has already answered it.
            if inFlight?.number == flight.number { pendingRequest = request }
        case .success(.upgrade(let upgrade)): performUpgrade(request, upgrade, flight)
        case .failure(let error as HTTPError): complete(requestNumber: flight.number, response: error.response())
        case .failure(let error):
            context.logger.error("handler failed", ["path": LogRedaction.path(request.head.path), "error": "\(error)",
                                                    "request_id": flight.requestID])
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

    private func preflight(_ request: HTTPRequest) -> HTTPResponse {
        let methods = context.router.allowedMethods(path: request.head.path)
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

    /// Writes the response to request `requestNumber` (ignored if that request is no longer the one in flight).
    func complete(requestNumber: UInt64, response: HTTPResponse) {
        connection.loop.assertInLoop()
        guard let flight = inFlight, flight.number == requestNumber, connection.isOpen else { return }
        let keepAlive = flight.keepAlive && !closeWhenDone
        var response = response
        finalize(&response, flight: flight, keepAlive: keepAlive)
        connection.write(response.serialized(headOnly: flight.headOnly))
        accessLog(flight, status: response.status, bytes: response.body.count)
        countRequest(flight, status: response.status)
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

    /// Headers the server sets, replacing a route's own (Content-Type is the route's, when it sets one).
    private static let serverHeaders = ["Date", "Content-Length", "Access-Control-Allow-Origin",
                                        "Access-Control-Expose-Headers", "Vary", "Connection", "X-Request-Id"]

    private func finalize(_ response: inout HTTPResponse, flight: InFlight, keepAlive: Bool) {
        // Routes set Content-Type, now and then Link or Retry-After, and none sets one of the server's headers: then
        // appending is enough, without a search per header.
        let hasContentType = response.headers.contains("Content-Type")
        let replacing = response.headers.count > (hasContentType ? 1 : 0)
            && Self.serverHeaders.contains { response.headers.contains($0) }
        // At most eight more below (Date, Content-Type, Content-Length, three for CORS, Connection, X-Request-Id): one
        // allocation, not a reallocation at the second and fourth field (a route's headers start empty or with one).
        response.headers.reserveCapacity(response.headers.count + 8)
        func set(_ name: String, _ value: String) {
            if replacing { response.headers.replaceOrAdd(name, value) } else { response.headers.add(name, value) }
        }
        set("Date", HTTPDateCache.current())
        if !hasContentType {
            response.headers.add("Content-Type", response.body.isEmpty ? "text/plain" : "application/json; charset=utf-8")
        }
        set("Content-Length", String(response.body.count))
        if let origin = context.allowedOrigin(for: flight.origin) {
            set("Access-Control-Allow-Origin", origin)
            set("Access-Control-Expose-Headers", "Link, Retry-After, X-Request-Id")
            if origin != "*" { set("Vary", "Origin") }
        }
        if !keepAlive { set("Connection", "close") }
        set("X-Request-Id", flight.requestID)
        Self.addRequestID(flight.requestID, toErrorBody: &response)
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

    func failAndClose(_ error: HTTPError, method: String = "-", path: String = "-") {
        let flight = InFlight(number: requestCount + 1, method: method, path: path, headOnly: false, keepAlive: false,
                              origin: nil, startedAt: MonotonicClock.now(), requestID: RequestID.make(incoming: nil),
                              clientIP: connection.peerIP)
        requestCount += 1
        inFlight = flight
        complete(requestNumber: flight.number, response: error.response())
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
        accessLog(flight, status: 101, bytes: 0)
        countRequest(flight, status: 101)
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

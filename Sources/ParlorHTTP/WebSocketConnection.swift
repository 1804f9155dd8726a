import ParlorCodec
import ParlorLoop
import ParlorMetrics

/// What a route that upgrades to WebSocket supplies: the object that receives the messages.
public struct WebSocketUpgrade: Sendable {
    /// Called on the connection's loop thread, right after the 101 is written.
    public let makeDelegate: @Sendable (WebSocketConnection, HTTPRequest) -> WebSocketDelegate

    public init(makeDelegate: @escaping @Sendable (WebSocketConnection, HTTPRequest) -> WebSocketDelegate) {
        self.makeDelegate = makeDelegate
    }
}

/// Receives a WebSocket's messages, on its loop thread.
public protocol WebSocketDelegate: AnyObject {
    func webSocketDidOpen(_ socket: WebSocketConnection)
    func webSocket(_ socket: WebSocketConnection, didReceiveText text: String)
    func webSocket(_ socket: WebSocketConnection, didReceiveBinary bytes: [UInt8])
    /// The connection is gone: closed by either side, failed, or timed out.
    func webSocketDidClose(_ socket: WebSocketConnection, code: UInt16?, reason: String)
    /// The peer broke the framing rules; nothing more is read. The delegate must close with `code`, now or once
    /// the replies to what the peer sent before are out (the default closes now).
    func webSocket(_ socket: WebSocketConnection, violatedProtocolWith code: UInt16, reason: String)
    /// A reply to one of the peer's requests was queued (see `sendReply`).
    func webSocketDidSendReply(_ socket: WebSocketConnection)
    /// The page of a replay ended by `replayPageEnded` has drained: time to ask for the next.
    func webSocketWantsReplayPage(_ socket: WebSocketConnection)
}

extension WebSocketDelegate {
    public func webSocketDidSendReply(_ socket: WebSocketConnection) {}
    public func webSocketWantsReplayPage(_ socket: WebSocketConnection) {}

    public func webSocket(_ socket: WebSocketConnection, violatedProtocolWith code: UInt16, reason: String) {
        socket.close(code: code, reason: reason)
    }
}

/// RFC 6455 on one upgraded connection: frames in, messages to the delegate, pings every `pingInterval`,
/// and a close for peers that stop answering or stop reading. Everything written (pongs and pings included) counts
/// against `maxPendingOutputBytes`, and a connection whose close frame the peer does not take within `pongTimeout`
/// is closed anyway.
public final class WebSocketConnection: ConnectionHandler {
    /// Strong on purpose: a write can close the connection mid-call, and closing clears `connection.handler`,
    /// which breaks this cycle.
    public let connection: Connection
    let context: HTTPServerContext
    /// The connection-cap keys this connection counts under, handed over from its HTTP handler.
    var countedAddresses = ConnectionCapKeys()
    private var decoder: WebSocketDecoder
    private var frameRate: FrameRateLimiter
    private var framesCharged = 0
    private(set) var delegate: WebSocketDelegate?
    private var lastHeardFrom = MonotonicClock.now()
    /// Something went to the peer since the heartbeat last looked: a flag, not a clock read per frame sent.
    private var sentSinceHeartbeat = false
    private var heartbeat: TimerID?
    /// After our close frame is queued: forces the socket shut if the peer never reads it.
    private var closeDeadline: TimerID?
    private var didClose = false
    private var closeSent = false
    /// Set after a framing violation: the rest of the input is not read.
    private var inputRefused = false
    private var closeReported = false
    private var closeCode: UInt16?
    private var closeReason = ""
    /// Frames not yet handed to the connection, oldest first from `backlogHead`: a paced burst and everything
    /// sent after it, so order is kept.
    private var backlog: [[UInt8]] = []
    private var backlogHead = 0
    private var backlogBytes = 0
    var backlogIsEmpty: Bool { backlogHead == backlog.count }
    /// While a replay has pages to come, frames sent meanwhile (live events, replies) wait here, after them in order.
    var holdingForReplay = false
    var held: [[UInt8]] = []
    var heldBytes = 0
    /// A replay page ended: ask for the next once output drains, unless `replayStall` fires first.
    var replayDrainWanted = false
    var replayStall: TimerID?
    /// Set by a delivery batch that queued frames here without writing them; its one writeQueued clears it.
    public var awaitsBatchWrite = false

    init(connection: Connection, context: HTTPServerContext) {
        self.connection = connection
        self.context = context
        let config = context.configuration.webSocket
        decoder = WebSocketDecoder(role: .server, maxFrameSize: config.maxFrameBytes, maxMessageSize: config.maxMessageBytes)
        frameRate = FrameRateLimiter(rate: config.framesPerSecond)
    }

    public var handle: ConnectionHandle { connection.handle }
    public var isOpen: Bool { connection.isOpen && !closeSent }
    public var peerIP: String { connection.peerIP }

    func start(delegate: WebSocketDelegate, initialBytes: [UInt8]) {
        connection.loop.assertInLoop()
        self.delegate = delegate
        // The first ping comes after a random part of the interval, so connections opened together (a reconnect
        // storm, a load test) do not ping in lockstep for ever after.
        scheduleHeartbeat(fraction: Double.random(in: 0.5...1))
        delegate.webSocketDidOpen(self)
        if !initialBytes.isEmpty {
            initialBytes.withUnsafeBytes { connection(connection, didRead: $0) }
        }
    }

    // MARK: Sending

    public func send(text: String) {
        send(frame: WebSocketFrameEncoder.text(text))
    }

    /// Queues an already-encoded frame; the same array may be queued to many sockets (fan-out encodes once).
    public func send(frame: [UInt8], writeNow: Bool = true) {
        connection.loop.assertInLoop()
        guard isOpen else { return }
        sentSinceHeartbeat = true
        if holdingForReplay {
            hold(frame)
            return
        }
        if backlogHead < backlog.count {
            addToBacklog(frame)
            return
        }
        if writeNow { connection.write(frame) } else { connection.queue(frame) }
        if connection.pendingOutputBytes > context.configuration.webSocket.maxPendingOutputBytes {
            // A consumer that does not read would otherwise grow our memory without bound.
            connection.discardUnsentOutput()
            context.metrics?.rateLimited(.output)
            close(code: WebSocketCloseCode.policyViolation, reason: "slow consumer: output queue over limit")
        }
    }

    /// Queues a frame of a burst that may exceed the output limit (a resume's replay): it is handed to the
    /// connection only while unsent output is below half the limit, the rest waits in the backlog. Call
    /// `writeQueued` afterwards.
    public func sendPaced(frame: [UInt8]) {
        connection.loop.assertInLoop()
        guard isOpen else { return }
        sentSinceHeartbeat = true
        let half = context.configuration.webSocket.maxPendingOutputBytes / 2
        if backlogHead == backlog.count, connection.pendingOutputBytes + frame.count <= half {
            connection.queue(frame)
        } else {
            addToBacklog(frame)
        }
    }

    private func addToBacklog(_ frame: [UInt8]) {
        let wasEmpty = backlogHead == backlog.count
        backlog.append(frame)
        backlogBytes += frame.count
        if backlogBytes > context.configuration.webSocket.maxBacklogBytes {
            connection.discardUnsentOutput()
            context.metrics?.rateLimited(.output)
            close(code: WebSocketCloseCode.policyViolation, reason: "slow consumer: backlog over limit")
            return
        }
        if wasEmpty { connection.notifyWhenOutputDrains(below: context.configuration.webSocket.maxPendingOutputBytes / 2) }
    }

    /// Hands backlog frames to the connection until half the output limit is pending, then waits for the next drain.
    private func feedBacklog() {
        guard isOpen else { return }
        let half = context.configuration.webSocket.maxPendingOutputBytes / 2
        while backlogHead < backlog.count, connection.pendingOutputBytes < half {
            let frame = backlog[backlogHead]
            backlog[backlogHead] = []
            backlogHead += 1
            backlogBytes -= frame.count
            connection.queue(frame)
        }
        if backlogHead == backlog.count {
            backlog.removeAll()
            backlogHead = 0
        } else if backlogHead > 1024, backlogHead * 2 > backlog.count {
            backlog.removeFirst(backlogHead)
            backlogHead = 0
        }
        connection.writeQueued()
        if backlogHead < backlog.count { connection.notifyWhenOutputDrains(below: half) }
    }

    public func connectionOutputDidDrain(_ connection: Connection) {
        feedBacklog()
        checkReplayDrained()
    }

    private func dropBacklog() {
        backlog = []
        backlogHead = 0
        backlogBytes = 0
        held = []
        heldBytes = 0
        holdingForReplay = false
        replayDrainWanted = false
        if let replayStall { connection.loop.cancelTimer(replayStall) }
        replayStall = nil
    }

    /// Queues the reply to one of the peer's requests and tells the delegate, which may be counting them.
    public func sendReply(frame: [UInt8], writeNow: Bool = true) {
        send(frame: frame, writeNow: writeNow)
        delegate?.webSocketDidSendReply(self)
    }

    /// Writes frames queued with `writeNow: false`.
    public func writeQueued() {
        connection.loop.assertInLoop()
        connection.writeQueued()
    }

    /// Stops or restarts reading the peer's frames (backpressure).
    public func setReading(_ enabled: Bool) {
        connection.loop.assertInLoop()
        connection.setReading(enabled)
    }

    /// Sends a close frame and closes the connection once it is written.
    public func close(code: UInt16, reason: String) {
        connection.loop.assertInLoop()
        guard !closeSent, connection.isOpen else { return }
        closeSent = true
        closeCode = code
        closeReason = reason
        dropBacklog()  // frames not handed over yet are not sent once closing (shutdown, a violation, a limit)
        connection.write(WebSocketFrameEncoder.close(code: code, reason: reason))
        connection.closeAfterFlush()
        armCloseDeadline()
        reportClose()
    }

    /// closeAfterFlush waits for the peer to take the queued bytes, and a peer that never reads would keep the
    /// connection (and its output) forever: give it `pongTimeout`, then close. (Lingering after the flush has its
    /// own bound.) The heartbeat has nothing left to do.
    private func armCloseDeadline() {
        if let heartbeat { connection.loop.cancelTimer(heartbeat) }
        heartbeat = nil
        guard !didClose else { return }
        // Strong, like the heartbeat (no side table); connectionDidClose cancels it.
        closeDeadline = connection.loop.schedule(after: context.configuration.webSocket.pongTimeout) {
            self.closeDeadline = nil
            // Once the close frame is out, the connection's lingering decides (a close now could reset it).
            if !self.connection.isLingering { self.connection.close() }
        }
    }

    // MARK: ConnectionHandler

    public func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer) {
        connection.loop.assertInLoop()
        guard !closeSent, !inputRefused else { return }
        lastHeardFrom = MonotonicClock.now()
        decoder.append(bytes)
        while !closeSent, connection.isOpen {
            let message: WebSocketMessage?
            do {
                message = try decoder.next()
            } catch {
                inputRefused = true
                if let delegate {
                    delegate.webSocket(self, violatedProtocolWith: error.closeCode, reason: error.reason)
                } else {
                    close(code: error.closeCode, reason: error.reason)
                }
                return
            }
            // Every frame counts, not only messages: fragments and pings cost work without making one.
            let frames = decoder.frameCount - framesCharged
            framesCharged = decoder.frameCount
            if !frameRate.take(frames) {
                context.metrics?.rateLimited(.frames)
                inputRefused = true
                close(code: WebSocketCloseCode.policyViolation, reason: "too many frames")
                return
            }
            guard let message else { return }
            handle(message)
        }
    }

    private func handle(_ message: WebSocketMessage) {
        switch message {
        case .text(let text): delegate?.webSocket(self, didReceiveText: text)
        case .binary(let bytes): delegate?.webSocket(self, didReceiveBinary: bytes)
        // Through send(frame:), so a peer that pings without reading the pongs hits the output limit too.
        case .ping(let payload): send(frame: WebSocketFrameEncoder.frame(.pong, payload: payload))
        case .pong: break
        case .close(let code, _):
            // Echo the peer's code (or 1000 for an empty close) and close our side.
            close(code: code ?? WebSocketCloseCode.normal, reason: "")
        }
    }

    public func connectionDidReachEnd(_ connection: Connection) {
        if closeCode == nil { closeCode = 1006; closeReason = "connection lost" }
    }

    public func connectionDidClose(_ connection: Connection) {
        connection.loop.assertInLoop()
        didClose = true
        dropBacklog()
        if let heartbeat { connection.loop.cancelTimer(heartbeat) }
        heartbeat = nil
        if let closeDeadline { connection.loop.cancelTimer(closeDeadline) }
        closeDeadline = nil
        if closeCode == nil { closeCode = 1006; closeReason = "connection lost" }
        reportClose()
        delegate = nil
        context.metrics?.webSocketConnections.subtract()
        context.connectionClosed(releasing: countedAddresses)
    }

    private func reportClose() {
        guard !closeReported else { return }
        closeReported = true
        delegate?.webSocketDidClose(self, code: closeCode, reason: closeReason)
    }

    // MARK: Heartbeat

    private func scheduleHeartbeat(fraction: Double = 1) {
        let interval = context.configuration.webSocket.pingInterval
        scheduleHeartbeat(after: TimeSpan(nanoseconds: UInt64(Double(interval.nanoseconds) * fraction)))
    }

    private func scheduleHeartbeat(after delay: TimeSpan) {
        // Strong: a weak reference would give every connection a side table, and every retain and release of it
        // (several per fan-out delivery) would take the slow path. connectionDidClose cancels the timer.
        // A 50th of the interval late at most (100 ms at the default 5 s): the heartbeats of a loop's connections
        // then fall due in batches, one wake-up of the loop each, instead of one wake-up per connection.
        let leeway = TimeSpan(nanoseconds: min(context.configuration.webSocket.pingInterval.nanoseconds / 50, 100_000_000))
        heartbeat = connection.loop.schedule(after: delay, leeway: leeway) { self.heartbeatFired() }
    }

    /// Closes a peer silent for `pongTimeout`, and pings one silent for a whole interval. A peer heard from more
    /// recently, and sent something since the last look, has just shown it is there and its path is not idle
    /// (proxies time out quiet connections): no ping, the next look comes an interval after it spoke.
    private func heartbeatFired() {
        heartbeat = nil
        guard isOpen else { return }
        let sentSinceLastLook = sentSinceHeartbeat
        sentSinceHeartbeat = false
        let webSocket = context.configuration.webSocket
        let silentFor = MonotonicClock.now() - lastHeardFrom
        if silentFor > webSocket.pongTimeout.nanoseconds {
            closeCode = 1006
            closeReason = "heartbeat timeout"
            reportClose()
            connection.close()
            return
        }
        if silentFor < webSocket.pingInterval.nanoseconds, sentSinceLastLook {
            scheduleHeartbeat(after: TimeSpan(nanoseconds: webSocket.pingInterval.nanoseconds - silentFor))
            return
        }
        send(frame: WebSocketFrameEncoder.frame(.ping, payload: [UInt8]()))
        // The ping itself does not count as traffic: an idle peer that answers is pinged every interval, as before.
        sentSinceHeartbeat = false
        guard isOpen else { return }
        scheduleHeartbeat()
    }
}

#if canImport(Glibc)
import Glibc
#endif
import CParlorSystem

/// What a connection tells the protocol running on it. Called on the connection's loop thread only.
public protocol ConnectionHandler: AnyObject {
    /// Bytes arrived; they are valid only during the call.
    func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer)
    /// The peer closed its side, or the socket failed; the connection is closed right after this returns.
    func connectionDidReachEnd(_ connection: Connection)
    /// The connection is closed; release what it held.
    func connectionDidClose(_ connection: Connection)
    /// Unsent output fell to the bound given to `notifyWhenOutputDrains(below:)`.
    func connectionOutputDidDrain(_ connection: Connection)
}

extension ConnectionHandler {
    public func connectionOutputDidDrain(_ connection: Connection) {}
}

/// A TCP socket owned by one event loop, accepted by a `Listener` or opened with `EventLoop.connect`: non-blocking
/// reads into the loop's buffer, and a per-connection output queue that asks for write readiness only while bytes
/// are pending.
public final class Connection: SelectorHandler {
    public let loop: EventLoop
    public let fd: Int32
    /// The peer's address as "ip:port".
    public let peer: String
    /// The peer's IP alone, for per-address limits.
    public let peerIP: String
    public var handler: ConnectionHandler?

    private(set) var registrationID: UInt32 = 0
    private var output = OutputQueue()
    private var wantsWrite = false
    private var readingPaused = false
    private var state = State.open
    private var lingerTimer: TimerID?
    /// When the peer last sent anything, while lingering.
    private var lastInputAt: UInt64 = 0
    /// When set, the handler hears once that unsent output fell to this many bytes (backpressure on output).
    private var drainThreshold: Int?
    /// Set for TLS connections; then OpenSSL does the socket reads and writes.
    var tls: TLSStream?
    /// OpenSSL asked a write to wait for readability (or a read for writability), e.g. during a key update.
    private var tlsWriteWaitsForRead = false
    private var tlsReadWaitsForWrite = false

    private enum State { case open, closingAfterFlush, lingering, closed }

    init(loop: EventLoop, fd: Int32, peer: String, peerIP: String) {
        self.loop = loop
        self.fd = fd
        self.peer = peer
        self.peerIP = peerIP
    }

    func register() throws(SystemError) {
        registrationID = try loop.register(fd: fd, interest: .read, handler: self)
    }

    /// A Sendable reference other threads use to hand this connection work.
    public var handle: ConnectionHandle { ConnectionHandle(loop: loop, fd: fd, registrationID: registrationID) }

    public var isOpen: Bool { state == .open }
    public var pendingOutputBytes: Int { output.byteCount }

    // MARK: Writing

    /// Queues bytes and writes what the socket takes now. Arrays are shared, not copied, when one frame goes to many.
    public func write(_ bytes: [UInt8]) {
        loop.assertInLoop()
        guard state == .open, !bytes.isEmpty else { return }
        output.append(bytes)
        flush()
    }

    /// Queues bytes without writing yet: several frames for this connection then leave in one writev
    /// (`writeQueued`). Fan-out uses this for all it has for a connection in one batch.
    public func queue(_ bytes: [UInt8]) {
        loop.assertInLoop()
        guard state == .open, !bytes.isEmpty else { return }
        output.append(bytes)
    }

    /// Writes what `queue` left pending.
    public func writeQueued() {
        loop.assertInLoop()
        guard state == .open || state == .closingAfterFlush else { return }
        flush()
    }

    /// Drops queued output that has not started to go out (used before closing a consumer that does not read).
    public func discardUnsentOutput() {
        loop.assertInLoop()
        output.discardUnstarted()
    }

    /// Closes once everything queued has been written, then lingers briefly so the peer reads it before any reset.
    /// Input is read (and discarded) from here on, even if reading was paused: unread input at close means a reset.
    public func closeAfterFlush() {
        loop.assertInLoop()
        guard state == .open else { return }
        state = .closingAfterFlush
        drainThreshold = nil
        if readingPaused {
            readingPaused = false
            updateInterest()
        }
        flush()
    }

    /// Tells the handler once (`connectionOutputDidDrain`, from a later loop task) when unsent output is at most
    /// `bytes`; for a handler that stopped producing because the peer reads too slowly.
    public func notifyWhenOutputDrains(below bytes: Int) {
        loop.assertInLoop()
        guard state == .open else { return }
        drainThreshold = bytes
        if output.byteCount <= bytes { outputDrained() }
    }

    /// Always delivered as a separate task, so a handler never hears of it in the middle of its own write.
    private func outputDrained() {
        drainThreshold = nil
        let handle = self.handle
        loop.execute {
            guard let connection = handle.resolve() else { return }
            connection.handler?.connectionOutputDidDrain(connection)
        }
    }

    private func flush() {
        if let tls {
            flushTLS(tls)
            return
        }
        while !output.isEmpty {
            let written = output.withIOVectors { vectors, count in
                writev(fd, vectors, Int32(count))
            }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { break }
                close()
                return
            }
            output.consume(written)
        }
        if output.isEmpty, state == .closingAfterFlush {
            startLingering()
            return
        }
        if let drainThreshold, output.byteCount <= drainThreshold { outputDrained() }
        setWriteInterest(!output.isEmpty)
    }

    private func flushTLS(_ tls: TLSStream) {
        guard tls.handshakeComplete else { return }
        tlsWriteWaitsForRead = false
        writing: while !output.isEmpty {
            switch output.withFirstChunk({ tls.write($0) }) {
            case .done(let count): output.consume(count)
            case .wantWrite: break writing
            case .wantRead:
                tlsWriteWaitsForRead = true
                break writing
            case .closed, .failed:
                close()
                return
            }
        }
        if output.isEmpty, state == .closingAfterFlush {
            startLingering()
            return
        }
        if let drainThreshold, output.byteCount <= drainThreshold { outputDrained() }
        setWriteInterest(!output.isEmpty || tlsReadWaitsForWrite)
    }

    private func setWriteInterest(_ wanted: Bool) {
        guard wanted != wantsWrite, state != .closed else { return }
        wantsWrite = wanted
        updateInterest()
    }

    /// Stops (or restarts) reading: backpressure for a peer that sends faster than its requests are answered.
    /// The kernel's buffers then fill and TCP slows the peer down.
    public func setReading(_ enabled: Bool) {
        loop.assertInLoop()
        guard enabled == readingPaused, state == .open else { return }  // closing connections always drain input
        readingPaused = !enabled
        updateInterest()  // level-triggered: bytes that arrived meanwhile are reported on the next wait
        if enabled, let tls, tls.hasBufferedInput {
            // ...but bytes already decrypted inside OpenSSL are not.
            let handle = self.handle
            loop.execute { handle.resolveAny()?.readAvailable() }
        }
    }

    private func updateInterest() {
        var interest: Interest = readingPaused ? [] : .read
        if wantsWrite { interest.insert(.write) }
        loop.reregister(fd: fd, id: registrationID, interest: interest)
    }

    /// Half-closes our side and discards input until the peer closes (it has read what we sent), or until it has
    /// acknowledged all our output and been quiet for a second, or for at most `maxLinger`. Closing while the peer
    /// still sends would make our kernel answer with RST, and a RST destroys what the peer has not read yet (a
    /// response, a close frame).
    private func startLingering() {
        state = .lingering
        setWriteInterest(false)
        tls?.shutdown()
        shutdown(fd, Int32(SHUT_WR))
        let startedAt = MonotonicClock.now()
        lastInputAt = startedAt
        scheduleLingerCheck(startedAt: startedAt)
    }

    private static let maxLinger = TimeSpan.seconds(10)

    private func scheduleLingerCheck(startedAt: UInt64) {
        lingerTimer = loop.schedule(after: .milliseconds(250)) { [weak self] in
            guard let self, state == .lingering else { return }
            let now = MonotonicClock.now()
            let quiet = now - lastInputAt >= TimeSpan.seconds(1).nanoseconds && parlor_unacknowledged_output(fd) <= 0
            if quiet || now - startedAt >= Self.maxLinger.nanoseconds {
                close()
            } else {
                scheduleLingerCheck(startedAt: startedAt)
            }
        }
    }

    /// True once everything queued went out and our side is shut, while input is drained before the close.
    public var isLingering: Bool { state == .lingering }

    // MARK: Closing

    /// Closes the socket now; queued output is dropped.
    public func close() {
        loop.assertInLoop()
        guard state != .closed else { return }
        state = .closed
        if let lingerTimer { loop.cancelTimer(lingerTimer) }
        loop.deregister(fd: fd, id: registrationID)
        Glibc.close(fd)
        let heldMuch = output.peakByteCount >= 256 * 1024
        output.removeAll()
        if heldMuch { loop.releaseFreedMemorySoon() }
        let handler = self.handler
        self.handler = nil
        handler?.connectionDidClose(self)
    }

    // MARK: Readiness

    func handleSelectorEvent(readable: Bool, writable: Bool, hangUp: Bool) {
        loop.assertInLoop()
        if let tls, !tls.handshakeComplete {
            continueHandshake(tls)
            return
        }
        if writable || (tlsWriteWaitsForRead && readable), state == .open || state == .closingAfterFlush { flush() }
        if (readable && !readingPaused) || hangUp || (tlsReadWaitsForWrite && writable) { readAvailable(evenIfPaused: hangUp) }
    }

    private func continueHandshake(_ tls: TLSStream) {
        switch tls.handshake() {
        case .done:
            setWriteInterest(!output.isEmpty)
            flush()
            readAvailable()  // the first request often arrives with the handshake's last flight
        case .wantRead: setWriteInterest(false)
        case .wantWrite: setWriteInterest(true)
        case .closed, .failed: close()
        }
    }

    /// `evenIfPaused`: a hang-up is reported whatever the interest, so it must be read to the end, or it spins.
    func readAvailable(evenIfPaused: Bool = false) {
        if let tls {
            readTLS(tls, evenIfPaused: evenIfPaused)
            return
        }
        // A bounded number of reads per wake-up keeps one chatty peer from starving the rest of the loop.
        for _ in 0..<4 {
            guard state != .closed, !readingPaused || evenIfPaused else { return }
            let count = read(fd, loop.readBuffer.baseAddress, loop.readBuffer.count)
            if count > 0 {
                if state == .lingering { lastInputAt = MonotonicClock.now() }
                if state == .open {
                    handler?.connection(self, didRead: UnsafeRawBufferPointer(rebasing: loop.readBuffer[0..<count]))
                }
                if count < loop.readBuffer.count { return }
            } else if count == 0 {
                if state == .open { handler?.connectionDidReachEnd(self) }
                close()
                return
            } else {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return }
                if state == .open { handler?.connectionDidReachEnd(self) }
                close()
                return
            }
        }
    }
}

/// A Sendable way to reach a connection from another thread; it resolves to nothing once that connection is gone,
/// even if its fd number has been reused.
public struct ConnectionHandle: Sendable, Hashable {
    public let loop: EventLoop
    let fd: Int32
    let registrationID: UInt32

    /// Runs `body` on the connection's loop if the connection is still open.
    public func withConnection(_ body: @escaping @Sendable (Connection) -> Void) {
        let (loop, fd, id) = (self.loop, self.fd, self.registrationID)
        loop.execute {
            if let connection = loop.connection(fd: fd, id: id), connection.isOpen { body(connection) }
        }
    }

    /// The connection in any state but closed, on its own loop thread.
    func resolveAny() -> Connection? {
        guard loop.inEventLoop else { return nil }
        return loop.connection(fd: fd, id: registrationID)
    }

    /// The connection, when called on its own loop thread and it is still open.
    public func resolve() -> Connection? {
        guard loop.inEventLoop, let connection = loop.connection(fd: fd, id: registrationID), connection.isOpen else { return nil }
        return connection
    }

    public static func == (a: ConnectionHandle, b: ConnectionHandle) -> Bool {
        a.loop === b.loop && a.fd == b.fd && a.registrationID == b.registrationID
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(loop))
        hasher.combine(fd)
        hasher.combine(registrationID)
    }
}

extension Connection {
    fileprivate func readTLS(_ tls: TLSStream, evenIfPaused: Bool) {
        tlsReadWaitsForWrite = false
        for _ in 0..<4 {
            guard state != .closed, !readingPaused || evenIfPaused else { return }
            switch tls.read(into: loop.readBuffer) {
            case .done(let count):
                if state == .lingering { lastInputAt = MonotonicClock.now() }
                if state == .open {
                    handler?.connection(self, didRead: UnsafeRawBufferPointer(rebasing: loop.readBuffer[0..<count]))
                }
            case .wantRead:
                return
            case .wantWrite:
                tlsReadWaitsForWrite = true
                setWriteInterest(true)
                return
            case .closed, .failed:
                if state == .open { handler?.connectionDidReachEnd(self) }
                close()
                return
            }
        }
        // Decrypted bytes left inside OpenSSL raise no epoll event: come back for them after others had a turn.
        if tls.hasBufferedInput, !readingPaused {
            let handle = self.handle
            loop.execute { handle.resolveAny()?.readAvailable() }
        }
    }
}

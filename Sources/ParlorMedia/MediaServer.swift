import ParlorLoop
import ParlorMetrics
import ParlorSRTP

/// Parlor's selective forwarding unit for audio: one UDP port and its own event loop thread, where every session's
/// ICE-lite checks, DTLS handshake, SRTP and forwarding run (docs/media.md, "the packet path").
///
/// It knows groups, members and sessions, not rooms or HTTP: its owner (the rooms thread) answers offers with
/// `answer(offer:…)`, then hands it work through `open`, `close` and `setSenders`, which run on the media loop in
/// the order they were called; the media loop tells the owner about speaking and slot changes through the event
/// handler given to `start`. Everything below the public entry points belongs to the media loop thread.
public final class MediaServer: @unchecked Sendable {  // mutable state is touched only on `loop` (assertInLoop guards it)
    public let configuration: MediaServerConfiguration
    /// The server's DTLS certificate, made at start; its fingerprint goes into every answer.
    public let certificate: DTLSCertificate
    /// The socket's bound address.
    public let localAddress: TransportAddress
    /// The host candidates every answer announces.
    public let candidates: [TransportAddress]
    let loop: EventLoop
    let logger: Logger
    let metrics: ServerMetrics?
    let context: DTLSContext
    private var socketStorage: UDPSocket?
    var events: (@Sendable (MediaServerEvent) -> Void)?

    // Media loop state.
    var responder = ICELiteResponder()
    var sessions: [UInt64: MediaSession] = [:]
    var sessionByUsernameFragment: [String: MediaSession] = [:]
    var groups: [String: MediaGroup] = [:]
    /// Reused for every forwarded packet and every batch: no allocation per subscriber.
    var queue = UDPSendQueue()
    var scratch: [UInt8] = []
    var closedSinceTrim = 0
    var tickTimer: TimerID?
    var reportTimer: TimerID?
    /// Counters for tests (media loop); `metrics` gets them once per receive batch.
    public internal(set) var forwardedPackets = 0
    public internal(set) var droppedPackets = 0
    /// STUN requests dropped unanswered because they did not authenticate.
    public internal(set) var unauthenticatedRequests = 0
    private var reportedForwarded = 0, reportedDropped = 0, reportedUnauthenticated = 0

    /// Binds the port and starts the media loop; nothing is answered until `start`. `metrics`: where the sessions and
    /// packet counts go (parlor_media_*).
    public init(configuration: MediaServerConfiguration, logger: Logger, metrics: ServerMetrics? = nil) throws {
        self.configuration = configuration
        self.logger = logger
        self.metrics = metrics
        certificate = try DTLSCertificate()
        context = try DTLSContext(role: .server, certificate: certificate, profiles: configuration.srtpProfiles)
        let loop = try EventLoop(name: "parlor-media")
        self.loop = loop
        scratch.reserveCapacity(UDPSocket.slotSize + SRTPProtectionProfile.largestOverhead)
        // The socket's handler needs `self`; it only runs once `start` registers it on the loop.
        let box = WeakServer()
        let socket = try UDPSocket(loop: loop, bindingTo: configuration.bind) { datagram, source in
            box.server?.receive(datagram, from: source)
        }
        socket.batchEnded = { box.server?.flush() }
        localAddress = socket.localAddress
        let announced = configuration.announced.isEmpty ? [socket.localAddress] : configuration.announced
        candidates = announced.map { TransportAddress(ip: $0.ip, port: socket.localAddress.port) }
        socketStorage = socket
        box.server = self
        loop.start()
    }

    /// Starts answering on the port; `events` hears speaking and slot changes, on the media loop thread.
    public func start(events: @escaping @Sendable (MediaServerEvent) -> Void) throws {
        let result: Result<Void, SystemError> = loop.submitAndWait { [self] in
            self.events = events
            do throws(SystemError) {
                try socket.start()
            } catch {
                return .failure(error)
            }
            return .success(())
        }
        try result.get()
    }

    /// Closes every session (close_notify to each) and the port, and stops the loop. Call once.
    public func stop() {
        loop.submitAndWait { [self] in
            for session in Array(sessions.values) { closeSession(session, notify: false) }
            if let tickTimer { loop.cancelTimer(tickTimer) }
            if let reportTimer { loop.cancelTimer(reportTimer) }
            socket.send(&queue)
            socket.close()
            events = nil
        }
        loop.stop()
        loop.waitUntilStopped()
    }

    // MARK: Work from the owner (any thread; runs on the media loop in call order)

    /// Opens a session (replacing one with the same id).
    public func open(_ setup: MediaSessionSetup) {
        loop.execute { [self] in openSession(setup) }
    }

    /// Ends a session, if it is open.
    public func close(session id: UInt64) {
        loop.execute { [self] in
            guard let session = sessions[id] else { return }
            closeSession(session, notify: true)
        }
    }

    /// The members of `group` whose audio is forwarded (joined, audio on, not muted, allowed to send); everyone
    /// else's packets are dropped here. An empty set with no sessions forgets the group.
    public func setSenders(group: String, members: Set<String>) {
        loop.execute { [self] in updateSenders(group: group, members: members) }
    }

    /// Runs `body` on the media loop and returns its result (tests and metrics read counters this way).
    public func onLoop<T: Sendable>(_ body: @escaping @Sendable (MediaServer) -> T) -> T {
        loop.submitAndWait { [self] in body(self) }
    }

    // MARK: Media loop

    var socket: UDPSocket {
        loop.assertInLoop()
        return socketStorage!
    }

    /// Open sessions (media loop: read it inside `onLoop`).
    public var sessionCount: Int {
        loop.assertInLoop()
        return sessions.count
    }

    /// Sends what one receive batch queued (STUN answers, DTLS flights, every forwarded copy) in `sendmmsg` batches.
    func flush() {
        if let metrics {  // before the send: whoever received a copy finds it counted
            metrics.mediaPacketsForwarded.add(forwardedPackets - reportedForwarded)
            metrics.mediaPacketsDropped.add(droppedPackets - reportedDropped)
            metrics.mediaSTUNUnauthenticated.add(unauthenticatedRequests - reportedUnauthenticated)
            reportedForwarded = forwardedPackets
            reportedDropped = droppedPackets
            reportedUnauthenticated = unauthenticatedRequests
        }
        socket.send(&queue)
    }

    func emit(_ event: MediaServerEvent) {
        events?(event)
    }
}

/// The socket's way back to its server without a reference cycle.
private final class WeakServer: @unchecked Sendable {  // set once before the loop can call it, then only read on the loop
    weak var server: MediaServer?
}

import ParlorLoop
import ParlorMetrics
import ParlorSRTP

/// Parlor's selective forwarding unit for audio: one UDP port, a receive loop and `configuration.workers` media
/// workers (docs/media.md, "the packet path" and "Workers").
///
/// The receive loop (`loop`) reads the port, answers ICE-lite checks for every session (one `ICELiteResponder`), keeps
/// the session table and each group's slots, and hands each DTLS or SRTP datagram to the worker that owns its
/// session; worker 0 runs on this same loop. It knows groups, members and sessions, not rooms or HTTP: its owner (the
/// rooms thread) answers offers with `answer(offer:…)`, then hands it work through `open`, `close` and `setSenders`,
/// which run on the receive loop in the order they were called; the loops tell the owner about speaking and slot
/// changes through the event handler given to `start`. Everything below the public entry points belongs to the
/// receive loop thread.
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
    /// Worker 0 on `loop`, the others on loops of their own; fixed at init, so any thread reads it.
    let workers: [MediaWorker]
    private var socketStorage: UDPSocket?
    var events: (@Sendable (MediaServerEvent) -> Void)?

    // Receive loop state.
    var responder = ICELiteResponder()
    var records: [UInt64: MediaSessionRecord] = [:]
    var recordByUsernameFragment: [String: MediaSessionRecord] = [:]
    var groups: [String: MediaGroup] = [:]
    var sessionsPerWorker: [Int]
    var nextKey: UInt64 = 0
    /// STUN answers and our checks; each worker queues its own sends.
    var queue = UDPSendQueue()
    /// Datagrams of one receive batch for each worker but 0, handed over when the batch ends.
    var pending: [[MediaWorker.Inbound]]
    var tickTimer: TimerID?
    var reportTimer: TimerID?
    var receiveDropped = 0
    /// Speakers on other nodes (MediaServer+Links.swift): how many groups hold, the linked packets dropped here, the
    /// groups with a recording or live-stream tap (they listen without a session), and who hears of the changes.
    var remoteSenderCount = 0
    var linkedDropped = 0, reportedLinkedDropped = 0
    var listeningTaps: [String: Set<MediaTapPurpose>] = [:]
    var reportedLocalGroups = MediaLocalGroups()
    var localGroupsObserver: (@Sendable (MediaLocalGroups) -> Void)?
    /// STUN requests dropped unanswered because they did not authenticate.
    public internal(set) var unauthenticatedRequests = 0
    private var reportedDropped = 0, reportedUnauthenticated = 0

    /// Binds the port, makes the workers and starts their loops; nothing is answered until `start`. `metrics`: where
    /// the sessions and packet counts go (parlor_media_*).
    public init(configuration: MediaServerConfiguration, logger: Logger, metrics: ServerMetrics? = nil) throws {
        self.configuration = configuration
        self.logger = logger
        self.metrics = metrics
        certificate = try DTLSCertificate()
        context = try DTLSContext(role: .server, certificate: certificate, profiles: configuration.srtpProfiles)
        let loop = try EventLoop(name: "parlor-media")
        self.loop = loop
        let count = max(1, configuration.workers)
        // The socket's handler needs `self`; it only runs once `start` registers it on the loop.
        let box = WeakServer()
        let socket = try UDPSocket(loop: loop, bindingTo: configuration.bind, sharingPort: count > 1) { datagram, source in
            box.server?.receive(datagram, from: source)
        }
        socket.batchEnded = { box.server?.flush() }
        // Each other worker sends on a socket of its own bound to the same port (SO_REUSEPORT); the kernel would hash
        // incoming datagrams over all of them, so every one is steered to this first socket, the receive path.
        if count > 1 { try socket.steerToFirst() }
        var workers = [MediaWorker(index: 0, workerCount: count, loop: loop, socket: socket, configuration: configuration,
                                   logger: logger, metrics: metrics, context: context)]
        for index in 1..<count {
            let workerLoop = try EventLoop(name: "parlor-media-\(index)")
            let sender = try UDPSocket(loop: workerLoop, bindingTo: socket.localAddress, sharingPort: true) { _, _ in }
            workers.append(MediaWorker(index: index, workerCount: count, loop: workerLoop, socket: sender, configuration: configuration,
                                       logger: logger, metrics: metrics, context: context))
        }
        self.workers = workers
        sessionsPerWorker = Array(repeating: 0, count: count)
        pending = Array(repeating: [], count: count)
        localAddress = socket.localAddress
        let announced = configuration.announced.isEmpty ? [socket.localAddress] : configuration.announced
        candidates = announced.map { TransportAddress(ip: $0.ip, port: socket.localAddress.port) }
        socketStorage = socket
        box.server = self
        for worker in workers { worker.server = self }
        loop.start()
        for worker in workers.dropFirst() { worker.loop.start() }
    }

    /// Starts answering on the port; `events` hears speaking and slot changes, on the receive loop and the workers' threads.
    public func start(events: @escaping @Sendable (MediaServerEvent) -> Void) throws {
        for worker in workers.dropFirst() { worker.loop.submitAndWait { worker.events = events } }
        let result: Result<Void, SystemError> = loop.submitAndWait { [self] in
            self.events = events
            workers[0].events = events
            do throws(SystemError) {
                try socket.start()
            } catch {
                return .failure(error)
            }
            return .success(())
        }
        try result.get()
    }

    /// Closes every session and the port, and stops the loops. Call once.
    public func stop() {
        loop.submitAndWait { [self] in
            cancelTimers()
            socket.send(&queue)
            socket.close()
            events = nil
        }
        for worker in workers.reversed() { worker.loop.submitAndWait { worker.stop() } }
        for worker in workers.dropFirst() {
            worker.loop.stop()
            worker.loop.waitUntilStopped()
        }
        loop.stop()
        loop.waitUntilStopped()
    }

    // MARK: Work from the owner (any thread; runs on the receive loop in call order)

    /// Opens a session (replacing one with the same id).
    public func open(_ setup: MediaSessionSetup) {
        loop.execute { [self] in openSession(setup) }
    }

    /// Ends a session, if it is open.
    public func close(session id: UInt64) {
        loop.execute { [self] in
            guard let record = records[id] else { return }
            closeSession(record, notify: true)
        }
    }

    /// The members of `group` whose audio is forwarded (joined, audio on, not muted, allowed to send); everyone
    /// else's packets are dropped where they enter. An empty set with no sessions forgets the group.
    public func setSenders(group: String, members: Set<String>) {
        loop.execute { [self] in updateSenders(group: group, members: members) }
    }

    /// Runs `body` on the receive loop and returns its result, once every worker has done what it was given before
    /// (tests and metrics read counters this way).
    public func onLoop<T: Sendable>(_ body: @escaping @Sendable (MediaServer) -> T) -> T {
        guard workers.count > 1 else { return loop.submitAndWait { [self] in body(self) } }
        loop.submitAndWait {}  // what the receive loop was given reaches the workers' queues first
        for worker in workers.dropFirst() { worker.loop.submitAndWait {} }
        return loop.submitAndWait { [self] in body(self) }
    }

    /// Each worker's counters (any thread; as of each worker's last batch).
    public var workerStatistics: [MediaWorkerStatistics] { workers.map(\.statistics) }

    // MARK: Receive loop

    var socket: UDPSocket {
        loop.assertInLoop()
        return socketStorage!
    }

    /// Open sessions (receive loop: read it inside `onLoop`).
    public var sessionCount: Int {
        loop.assertInLoop()
        return records.count
    }

    /// Datagrams dropped: on the receive path (no session at that address) and by the workers, as of their last batch.
    public var droppedPackets: Int {
        loop.assertInLoop()
        return receiveDropped + workers.reduce(0) { $0 + $1.counters.dropped.load(ordering: .relaxed) }
    }

    /// Copies sent to subscribers by every worker, as of their last batch.
    public var forwardedPackets: Int { workers.reduce(0) { $0 + $1.counters.forwarded.load(ordering: .relaxed) } }

    /// Hands each worker the datagrams the receive batch brought it, then sends the STUN answers and worker 0's copies.
    func flush() {
        for index in pending.indices.dropFirst() where !pending[index].isEmpty {
            let batch = pending[index]
            pending[index].removeAll(keepingCapacity: true)
            let worker = workers[index]
            worker.loop.execute { [worker] in worker.receive(batch) }
        }
        if let metrics {
            metrics.mediaPacketsDropped.add(receiveDropped - reportedDropped)
            metrics.mediaSTUNUnauthenticated.add(unauthenticatedRequests - reportedUnauthenticated)
            reportedDropped = receiveDropped
            reportedUnauthenticated = unauthenticatedRequests
        }
        socket.send(&queue)
        workers[0].flush()
    }

    func emit(_ event: MediaServerEvent) {
        events?(event)
    }
}

/// The socket's way back to its server without a reference cycle.
private final class WeakServer: @unchecked Sendable {  // set once before the loop can call it, then only read on the loop
    weak var server: MediaServer?
}

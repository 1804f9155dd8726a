import ParlorLoop
import ParlorMetrics
import ParlorSRTP
import Synchronization

/// One media worker: an event loop thread that owns a share of the sessions (their DTLS, SRTP, rewriters, speaking
/// and timers) and sends on its own socket bound to the media port. The receive loop (`MediaServer`) hands it the
/// datagrams of its sessions; it decrypts a speaker's packet once, enforces who may send, forwards to its own
/// subscribers and hands the packet once to each other worker with subscribers of that speaker (docs/media.md,
/// "Workers"). Worker 0 runs on the receive loop itself and sends on the receive socket: one worker is the single
/// media thread of before. Everything but `counters` belongs to `loop`.
final class MediaWorker: @unchecked Sendable {  // mutable state is touched only on `loop`; `counters` are atomics
    /// A datagram of one of this worker's sessions, as the receive loop hands it over.
    struct Inbound: Sendable {
        var datagram: [UInt8]
        var source: TransportAddress
        var key: UInt64
    }

    /// A decrypted RTP packet of a sender on another worker.
    struct HandedOff: Sendable {
        var sender: UInt64
        var packet: [UInt8]
    }

    let index: Int
    let loop: EventLoop
    let configuration: MediaServerConfiguration
    let logger: Logger
    let metrics: ServerMetrics?
    let context: DTLSContext
    let counters = MediaWorkerCounters()
    /// Set once by the server's init, before any loop runs.
    weak var server: MediaServer?
    let socket: UDPSocket
    var events: (@Sendable (MediaServerEvent) -> Void)?

    var sessions: [UInt64: MediaSession] = [:]
    var groupSessions: [String: [MediaSession]] = [:]
    /// Senders on other workers → this worker's subscribers (session, slot) that carry them.
    var handedOffForwardTo: [UInt64: [(session: MediaSession, slot: Int)]] = [:]
    var handedOffSenders: [String: [UInt64]] = [:]
    /// Speakers on other nodes whose linked packets this worker takes (MediaWorker+Links.swift), by key and by group.
    var remoteSenders: [UInt64: RemoteSender] = [:]
    var groupRemoteSenders: [String: [RemoteSender]] = [:]
    /// Each tapped group's tap (`MediaServer.setTap`); a session of the group carries it from its opening.
    var taps: [String: [MediaTapPurpose: any MediaPacketTap]] = [:]
    /// Each relayed group's relay to other nodes (`MediaServer.setRelay`), put on its sessions like the taps.
    var relays: [String: any MediaPacketRelay] = [:]
    /// Reused for every forwarded packet and every batch: no allocation per subscriber.
    var queue = UDPSendQueue()
    var scratch: [UInt8] = []
    /// Decrypted packets of one batch for each other worker, handed over when the batch ends.
    var outbox: [[HandedOff]]
    var closedSinceTrim = 0
    var tickTimer: TimerID?
    var reportTimer: TimerID?
    var forwarded = 0, dropped = 0, decrypted = 0, handedOff = 0, handoffsReceived = 0, linkedReceived = 0
    private var reportedForwarded = 0, reportedDropped = 0, reportedHandedOff = 0

    init(index: Int, workerCount: Int, loop: EventLoop, socket: UDPSocket, configuration: MediaServerConfiguration,
         logger: Logger, metrics: ServerMetrics?, context: DTLSContext) {
        self.index = index
        self.loop = loop
        self.socket = socket
        self.configuration = configuration
        self.logger = logger
        self.metrics = metrics
        self.context = context
        outbox = Array(repeating: [], count: workerCount)
        scratch.reserveCapacity(UDPSocket.slotSize + SRTPProtectionProfile.largestOverhead)
    }

    /// Runs `body` on this worker's loop: at once when called there (worker 0 from the receive loop, keeping the
    /// order of everything it was given), else queued in call order.
    func run(_ body: @escaping @Sendable (MediaWorker) -> Void) {
        if loop.inEventLoop {
            body(self)
        } else {
            loop.execute { [self] in body(self) }
        }
    }

    var statistics: MediaWorkerStatistics {
        MediaWorkerStatistics(sessions: counters.sessions.load(ordering: .relaxed), decrypted: counters.decrypted.load(ordering: .relaxed),
                              handedOff: counters.handedOff.load(ordering: .relaxed),
                              handoffsReceived: counters.handoffsReceived.load(ordering: .relaxed),
                              forwarded: counters.forwarded.load(ordering: .relaxed), dropped: counters.dropped.load(ordering: .relaxed),
                              linkedReceived: counters.linkedReceived.load(ordering: .relaxed))
    }

    // MARK: Sessions (from the receive loop, in its order)

    func open(_ setup: MediaSessionSetup, key: UInt64, loudness: SessionLoudness) {
        loop.assertInLoop()
        let dtls: DTLSTransport
        do {
            dtls = try DTLSTransport(context: context, expectedRemoteFingerprint: setup.remoteFingerprint)
        } catch {
            logger.error("media session could not start DTLS", ["error": "\(error)"])
            return ended(setup, key: key)
        }
        let session = MediaSession(setup: setup, key: key, loudness: loudness, dtls: dtls, now: MonotonicClock.now())
        session.tap = combinedTap(of: setup.group)
        session.relay = relays[setup.group]
        sessions[key] = session
        groupSessions[setup.group, default: []].append(session)
        counters.sessions.store(sessions.count, ordering: .relaxed)
        startTimersIfStopped()
    }

    /// The same peer connection renegotiating: it keeps DTLS and SRTP, as the browser does.
    func renegotiate(key: UInt64, _ setup: MediaSessionSetup) {
        loop.assertInLoop()
        guard let session = sessions[key] else { return }
        session.update(setup)
        if !setup.sends, session.speaking.reset() == false { emit(.speaking(group: setup.group, member: setup.member, on: false)) }
    }

    /// Removes a session; `notify`: send close_notify to its address.
    func close(key: UInt64, notify: Bool) {
        loop.assertInLoop()
        guard let session = sessions.removeValue(forKey: key) else { return }
        counters.sessions.store(sessions.count, ordering: .relaxed)
        let alert = session.dtls.close()
        if notify, let address = session.address {
            for datagram in alert { queue.append(datagram, to: address) }
            socket.send(&queue)
        }
        // Until the group's next plan arrives, fan-outs that still name it find no address.
        session.address = nil
        if session.speaking.reset() == false { emit(.speaking(group: session.setup.group, member: session.member, on: false)) }
        let name = session.setup.group
        groupSessions[name]?.removeAll { $0 === session }
        if groupSessions[name]?.isEmpty == true { groupSessions[name] = nil }
        session.forwardTo = []
        closedSinceTrim += 1
        if closedSinceTrim >= configuration.trimAfterClosedSessions || sessions.isEmpty {
            closedSinceTrim = 0
            MallocArenas.trim()
        }
    }

    /// A session this worker ended by itself (DTLS failed or closed, no address for too long): the receive loop
    /// forgets it and tells the owner.
    func ended(_ setup: MediaSessionSetup, key: UInt64) {
        guard let server else { return }
        server.loop.execute { [server] in server.workerEnded(session: setup.id, key: key) }
    }

    func setAddress(key: UInt64, _ address: TransportAddress) {
        loop.assertInLoop()
        guard let session = sessions[key] else { return }
        session.address = address
        session.addressLostAt = nil
        session.hadAddress = true
    }

    func loseAddress(key: UInt64, now: UInt64) {
        loop.assertInLoop()
        guard let session = sessions[key] else { return }
        session.address = nil
        session.addressLostAt = now
    }

    /// Takes a group's plan: who may send, each local subscriber's slots, the local fan-out, the hand-offs.
    func apply(_ plan: MediaGroupPlan, group name: String) {
        loop.assertInLoop()
        for session in groupSessions[name] ?? [] {
            let allowed = plan.senders.contains(session.key)
            if session.maySend, !allowed, session.speaking.reset() == false { emit(.speaking(group: name, member: session.member, on: false)) }
            session.maySend = allowed
            session.forwardTo.removeAll(keepingCapacity: true)
            session.handoffTo.removeAll(keepingCapacity: true)
        }
        for sender in groupRemoteSenders[name] ?? [] {
            sender.forwardTo.removeAll(keepingCapacity: true)
            sender.handoffTo.removeAll(keepingCapacity: true)
        }
        for sender in handedOffSenders.removeValue(forKey: name) ?? [] { handedOffForwardTo[sender] = nil }
        var otherWorkers: [UInt64] = []
        for entry in plan.subscribers {
            guard entry.worker == index else {
                for case let source? in entry.sources {
                    if let sender = sessions[source], !sender.handoffTo.contains(entry.worker) { sender.handoffTo.append(entry.worker) }
                    if let sender = remoteSenders[source], !sender.handoffTo.contains(entry.worker) { sender.handoffTo.append(entry.worker) }
                }
                continue
            }
            guard let subscriber = sessions[entry.key] else { continue }
            for (slot, source) in entry.sources.enumerated() where slot < subscriber.slots.count {
                subscriber.slots[slot].source = source
                guard let source else { continue }
                if let sender = sessions[source] {
                    sender.forwardTo.append((subscriber, slot))
                } else if let sender = remoteSenders[source] {
                    sender.forwardTo.append((subscriber, slot))
                } else {
                    if handedOffForwardTo[source] == nil { otherWorkers.append(source) }
                    handedOffForwardTo[source, default: []].append((subscriber, slot))
                }
            }
        }
        if !otherWorkers.isEmpty { handedOffSenders[name] = otherWorkers }
    }

    /// Closes every session (no close_notify) and stops the timers; worker 0's socket is the server's to close.
    func stop() {
        loop.assertInLoop()
        for key in Array(sessions.keys) { close(key: key, notify: false) }
        remoteSenders = [:]
        groupRemoteSenders = [:]
        cancelTimers()
        socket.send(&queue)
        if index > 0 { socket.close() }
        events = nil
    }

    // MARK: Batches

    /// Sends what a batch queued (every forwarded copy, DTLS flights) and hands the batch's decrypted packets to the
    /// other workers, one task per worker.
    func flush() {
        loop.assertInLoop()
        counters.decrypted.store(decrypted, ordering: .relaxed)
        counters.handedOff.store(handedOff, ordering: .relaxed)
        counters.handoffsReceived.store(handoffsReceived, ordering: .relaxed)
        counters.forwarded.store(forwarded, ordering: .relaxed)
        counters.dropped.store(dropped, ordering: .relaxed)
        counters.linkedReceived.store(linkedReceived, ordering: .relaxed)
        if let metrics {  // before the send: whoever received a copy finds it counted
            metrics.mediaPacketsForwarded.add(forwarded - reportedForwarded)
            metrics.mediaPacketsDropped.add(dropped - reportedDropped)
            metrics.mediaPacketsHandedOff.add(handedOff - reportedHandedOff)
            reportedForwarded = forwarded
            reportedDropped = dropped
            reportedHandedOff = handedOff
        }
        if let workers = server?.workers {
            for target in outbox.indices where !outbox[target].isEmpty {
                let batch = outbox[target]
                outbox[target].removeAll(keepingCapacity: true)
                let worker = workers[target]
                worker.loop.execute { [worker] in worker.receiveHandedOff(batch) }
            }
        }
        socket.send(&queue)
    }

    func emit(_ event: MediaServerEvent) {
        events?(event)
    }
}

import ParlorLoop
import ParlorMedia
import ParlorMediaLink
import ParlorMetrics
import ParlorPostgres
import ParlorRooms
import ParlorRoomsPostgres

/// This node's end of its media links to the other nodes on the PostgreSQL database (issue 41): a UDP socket on
/// `--cluster-media-address`, this node's link offer in `media_link_offers`, and one link per peer node, each with
/// the sender and receiver of `MediaLinkKeys` derived from both nodes' offers.
///
/// Threads: the socket, the links and the packet handler live on `loop` (a thread of its own, "parlor-media-link");
/// the database and the key derivations on `worker`, so a slow database never holds up a packet. `link(to:)`,
/// `refreshPeers()` and `stop()` block: call them off the server's loops.
///
/// Key generations: a fresh X25519 key pair and random epoch at every start; the offer is signed again with the same
/// key every `renewal` (a new creation time) and verified within `freshness` = 3 × renewal, so the offer of a node
/// that stopped renewing is refused after at most that long, and a dead node's row is ignored at once when its
/// `nodes` lease ends. Each renewal also reads the peers' offers and re-keys every link whose peer has a new epoch
/// (a restarted node), and a datagram whose epoch no link knows makes the endpoint read them at once (at most once
/// a second), holding up to `pendingLimit` such datagrams meanwhile.
public final class MediaLinkEndpoint: @unchecked Sendable {  // loop state below is touched on `loop` only
    public typealias PacketHandler = @Sendable (_ packet: MediaLinkPacket, _ fromNodeID: String) -> Void
    static let pendingLimit = 256
    static let retiredEpochLimit = 64

    public let nodeID: String
    /// Where the socket is bound (the kernel's port with port 0) and what the offer row announces.
    public let localAddress: TransportAddress
    /// This start's epoch (the header of every datagram this node sends).
    public let epoch: UInt32
    public let renewal: TimeSpan
    public var freshnessMilliseconds: Int64 { Int64(renewal.seconds * 3000) }

    let loop: EventLoop
    let worker: EventLoop
    let offers: PostgresMediaLinkOffers
    /// Verifies the peers' offers.
    let secret: MediaLinkSecret
    /// Signs this node's offer: `secret`, except in tests of a node that does not know the cluster's secret.
    let signingSecret: MediaLinkSecret
    let keyPair: X25519KeyPair
    /// This start's offer (its creation time is renewed in the rows, not here): the local half of every derivation.
    let localOffer: LinkOffer
    let counters: MediaLinkCounters
    let logger: Logger
    let handler = Locked<PacketHandler?>(nil)
    let batchHandler = Locked<(@Sendable ([(packet: MediaLinkPacket, from: String)]) -> Void)?>(nil)
    /// The installed links by node, as the media workers read them to seal (MediaLinkEndpoint+Forwarding.swift): a copy
    /// of `links` the loop publishes after each change.
    let sealers = Locked<[String: PeerLink]>([:])
    /// A link neither wanted nor used for this long is torn down at the next renewal.
    let idleTeardown: TimeSpan
    /// Every datagram sent, with its destination (tests capture them to replay or tamper with).
    let sentTap = Locked<(@Sendable ([UInt8], TransportAddress) -> Void)?>(nil)
    let publishedOffer = Locked<[UInt8]>([])
    private let stopped = Locked(false)

    // Loop-confined.
    var socket: UDPSocket?
    var links: [String: PeerLink] = [:]
    /// By the peer's epoch, which the datagram header carries. Two peers drawing the same random epoch (odds 2^-32 a
    /// pair) would share a slot: the later link wins and the other's packets fail authentication until it restarts.
    var receivers: [UInt32: PeerLink] = [:]
    var retiredEpochs: [UInt32] = []
    var pending: [[UInt8]] = []
    var refreshing = false
    var lastRefresh: UInt64 = 0
    var renewalTimer: TimerID?
    /// The nodes the forwarding unit sends to now (`want`), and the packets opened in the current read of the socket.
    var wanted: Set<String> = []
    var received: [(packet: MediaLinkPacket, from: String)] = []

    /// One peer's link, as installed on the loop.
    final class PeerLink: @unchecked Sendable {  // immutable but for `lastActivity` (loop only); `sender` is locked
        let nodeID: String
        let remoteEpoch: UInt32
        let destination: TransportAddress
        /// Sealed under its lock: the media workers relaying speakers seal here, each on its own thread.
        let sender: Locked<MediaLinkSender>
        let receiver: MediaLinkReceiver
        /// The last packet sent or received on it (monotonic ns), for the idle teardown.
        var lastActivity = MonotonicClock.now()

        init(keys: MediaLinkKeys, destination: TransportAddress) throws(MediaLinkCryptoError) {
            nodeID = keys.remoteNodeID
            remoteEpoch = keys.remoteEpoch
            self.destination = destination
            sender = Locked(try MediaLinkSender(keys: keys))
            receiver = try MediaLinkReceiver(keys: keys)
        }
    }

    /// Binds `address`, publishes this node's offer and starts the threads. `signingSecret` is for tests only.
    init(nodeID: String, bindingTo address: TransportAddress, database: PostgresDatabase, secret: MediaLinkSecret,
         counters: MediaLinkCounters, logger: Logger, renewal: TimeSpan = .seconds(20), idleTeardown: TimeSpan = .seconds(60),
         signingSecret: MediaLinkSecret? = nil) throws {
        self.nodeID = nodeID
        self.secret = secret
        self.signingSecret = signingSecret ?? secret
        self.counters = counters
        self.logger = logger
        self.renewal = renewal
        self.idleTeardown = idleTeardown
        offers = PostgresMediaLinkOffers(database: database)
        keyPair = try X25519KeyPair()
        localOffer = try LinkOffer.make(nodeID: nodeID, keyPair: keyPair, createdAtMilliseconds: Self.nowMilliseconds())
        epoch = localOffer.epoch
        loop = try EventLoop(name: "parlor-media-link")
        worker = try EventLoop(name: "parlor-media-link-db")
        var receive: ((_ datagram: [UInt8], _ source: TransportAddress) -> Void)?
        let socket = try UDPSocket(loop: loop, bindingTo: address) { datagram, source in receive?(datagram, source) }
        localAddress = socket.localAddress
        self.socket = socket  // before the loop runs: from then on, the loop's alone
        receive = { [unowned self] datagram, _ in self.received(datagram) }
        socket.batchEnded = { [unowned self] in self.flushReceived() }
        try publishOffer()
        loop.start()
        worker.start()
        let started: Result<Void, SystemError> = loop.submitAndWait { [self] in
            do throws(SystemError) { try self.socket?.start() } catch { return .failure(error) }
            scheduleRenewal()
            return .success(())
        }
        if case .failure(let error) = started {
            stopped.withLock { $0 = true }
            stopThreads { [offers, nodeID] in try? offers.remove(nodeID: nodeID, offer: publishedOffer.withLock { $0 }) }
            throw error
        }
    }

    /// Where each packet that arrives over a link goes, on the link's thread (tests; the forwarding unit takes them in
    /// batches, `onPackets`).
    public func onPacket(_ body: PacketHandler?) { handler.withLock { $0 = body } }

    /// Signs this node's offer with the current time and writes it with the bound address.
    func publishOffer() throws {
        let offer = try LinkOffer(nodeID: nodeID, epoch: epoch, publicKey: keyPair.publicKey, createdAtMilliseconds: Self.nowMilliseconds())
        let bytes = try offer.signed(with: signingSecret)
        try offers.publish(nodeID: nodeID, address: localAddress.description, offer: bytes)
        publishedOffer.withLock { $0 = bytes }
    }

    /// Sets up (or renews) the link to `nodeID` from its row: its offer verified under the cluster secret and within
    /// the freshness window, keys derived, sender and receiver installed. Returns the peer's epoch. Blocks.
    @discardableResult
    public func link(to nodeID: String) throws(MediaLinkSetupError) -> UInt32 {
        guard !isStopped else { throw .stopped }
        let result: Result<UInt32, MediaLinkSetupError> = worker.submitAndWait { [self] in linkOnWorker(to: nodeID) }
        return try result.get()
    }

    /// Reads every live peer's offer and installs a link for each one that is new or has a new epoch; refused offers
    /// are counted. Returns how many links were (re)installed. Blocks.
    @discardableResult
    public func refreshPeers() -> Int {
        guard !isStopped else { return 0 }
        return worker.submitAndWait { [self] in refreshOnWorker() }
    }

    /// Which peers a refresh (re)keys: every live one (`refreshPeers`); at a renewal, those linked or wanted (a peer
    /// that restarted gets new keys); for datagrams held for an unknown epoch, the peers now at those epochs.
    enum RefreshScope { case all, renewal, heldEpochs }

    func refreshOnWorker(_ scope: RefreshScope = .all) -> Int {
        let rows: [PostgresMediaLinkOffers.Published]
        do { rows = try offers.live(exceptNodeID: nodeID) } catch {
            logger.warning("media link offers not read", ["error": "\(error)"])
            return 0
        }
        let (known, wantedNodes, heldEpochs) = loop.submitAndWait { [self] in
            (links.mapValues(\.remoteEpoch), wanted, Set(pending.map(Self.epoch(of:))))
        }
        let prepared = rows.compactMap { row -> Prepared? in
            guard case .success(let prepared) = prepare(row) else { return nil }
            let (node, epoch) = (prepared.keys.remoteNodeID, prepared.keys.remoteEpoch)
            guard known[node] != epoch else { return nil }
            switch scope {
            case .all: return prepared
            case .renewal: return known[node] != nil || wantedNodes.contains(node) ? prepared : nil
            case .heldEpochs: return heldEpochs.contains(epoch) ? prepared : nil
            }
        }
        guard !prepared.isEmpty else { return 0 }
        return install(prepared).filter { if case .success = $0 { true } else { false } }.count
    }

    /// The epoch in a datagram's header (at least `MediaLinkPacketFormat.headerLength` bytes).
    static func epoch(of datagram: [UInt8]) -> UInt32 {
        UInt32(datagram[1]) << 24 | UInt32(datagram[2]) << 16 | UInt32(datagram[3]) << 8 | UInt32(datagram[4])
    }

    /// Whether this endpoint has a link to `nodeID`, and its epoch (tests, metrics). Blocks.
    public func linkedEpoch(of nodeID: String) -> UInt32? {
        guard !isStopped else { return nil }
        return loop.submitAndWait { [self] in links[nodeID]?.remoteEpoch }
    }

    /// Seals `rtp` for `speaker` in `room` and sends it to `nodeID` over its link; a packet for a node without a link,
    /// or one the format refuses, is counted as unsent. Any thread.
    public func send(to nodeID: String, room: String, speaker: String, rtp: [UInt8]) {
        loop.execute { [self] in sendOnLoop(to: nodeID, room: room, speaker: speaker, rtp: rtp) }
    }

    /// Deletes this node's offer row (unless a newer start replaced it), closes the socket and ends both threads.
    /// Safe to call more than once. Blocks.
    public func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        stopThreads { [self] in
            let offer = publishedOffer.withLock { $0 }
            do { try offers.remove(nodeID: nodeID, offer: offer) } catch {
                logger.warning("media link offer not removed", ["error": "\(error)"])
            }
        }
    }

    /// In this order: no more renewals; the worker finishes what it was given (it may wait on the loop, which still
    /// runs) and ends, so no renewal writes the offer again after `whenWorkerEnded` deletes it; then the socket and the loop.
    private func stopThreads(whenWorkerEnded: () -> Void = {}) {
        loop.submitAndWait { [self] in
            if let renewalTimer { loop.cancelTimer(renewalTimer) }
            renewalTimer = nil
        }
        worker.stop()
        worker.waitUntilStopped()
        whenWorkerEnded()
        loop.submitAndWait { [self] in
            socket?.close()
            socket = nil
            links = [:]
            sealers.withLock { $0 = [:] }
            receivers = [:]
            pending = []
        }
        loop.stop()
        loop.waitUntilStopped()
    }

    var isStopped: Bool { stopped.withLock { $0 } }

    static func nowMilliseconds() -> Int64 { WallClock.nowMilliseconds() }
}

/// Why `MediaLinkEndpoint.link(to:)` set up no link.
public enum MediaLinkSetupError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No offer row of that node, or its node holds no lease (dead, or stopped).
    case noOffer(nodeID: String)
    /// The offer is there but refused: not signed under this cluster's secret, out of the freshness window, malformed.
    case refused(nodeID: String, LinkOfferError)
    /// The row's address is not a numeric HOST:PORT.
    case badAddress(nodeID: String, address: String)
    case crypto(MediaLinkCryptoError)
    case database(String)
    /// `stop()` was called.
    case stopped

    public var description: String {
        switch self {
        case .noOffer(let nodeID): return "no live media link offer of node \(nodeID)"
        case .refused(let nodeID, let error): return "media link offer of node \(nodeID) refused: \(error)"
        case .badAddress(let nodeID, let address): return "media link address \(address) of node \(nodeID) is not a numeric HOST:PORT"
        case .crypto(let error): return "media link keys: \(error)"
        case .database(let error): return "media link offers not read: \(error)"
        case .stopped: return "the media link endpoint is stopped"
        }
    }
}

extension ParlorApplication {
    /// The media link endpoint when --cluster-media-address is set (validation made sure the database is
    /// PostgreSQL), under --cluster-secret or the secret every node on the database shares ("media-link"); with the
    /// forwarding unit, the cascade that carries its rooms' speakers over the links.
    static func startMediaLink(_ configuration: AppConfiguration, storage: AppStorage, store: any RoomStore, media: MediaServer?,
                               metrics: ServerMetrics, logger: Logger) throws -> (MediaLinkEndpoint?, MediaCascade?) {
        guard let address = configuration.clusterMediaAddress, case .postgres(let database) = storage,
              let nodeID = (store as? PostgresRoomStore)?.nodeID else { return (nil, nil) }
        let bytes = try configuration.clusterSecret.map { Array($0.utf8) } ?? storage.sharedSecret(named: "media-link") ?? []
        let endpoint = try MediaLinkEndpoint(nodeID: nodeID, bindingTo: address, database: database, secret: try MediaLinkSecret(bytes),
                                             counters: metrics.mediaLink, logger: logger, renewal: configuration.clusterLinkRenewal,
                                             idleTeardown: configuration.clusterLinkIdleTeardown)
        logger.info("media link endpoint started", ["address": endpoint.localAddress.description, "node": nodeID, "epoch": "\(endpoint.epoch)"])
        guard let media else { return (endpoint, nil) }
        do {
            let cascade = try MediaCascade(media: media, endpoint: endpoint, listeners: PostgresMediaRoomListeners(database: database, nodeID: nodeID),
                                           pollInterval: configuration.clusterListenersPoll, logger: logger)
            return (endpoint, cascade)
        } catch {
            endpoint.stop()
            throw error
        }
    }
}

import ParlorLoop
import ParlorMedia
import ParlorMediaLink
import ParlorRoomsPostgres
import Synchronization

/// One room's audio across nodes (issue 41): this node's forwarding unit serves its own connections, and each of
/// its speakers' packets crosses a media link once to every other node that listens in the room.
///
/// - Where this node listens (a session that receives, a recording, a live stream: `MediaLocalGroups.listening`) is
///   written to `media_room_listeners` when it changes.
/// - For the rooms where it has speakers (`sending`), the other live nodes listening there are read every
///   `pollInterval`; each such node gets a link (set up now if missing) and the room a relay (`LinkOutlet`), which
///   seals each permitted speaker packet once per node into the media worker's queue (`MediaLinkEndpoint.seal`).
/// - Packets from other nodes go to the forwarding unit in the batches the link socket reads (`receiveLinked`).
///
/// All its state lives on the link endpoint's database thread (`endpoint.worker`); the media loop and the link thread
/// only queue work there.
final class MediaCascade: @unchecked Sendable {  // state below is touched on `endpoint.worker` only
    let media: MediaServer
    let endpoint: MediaLinkEndpoint
    let listeners: PostgresMediaRoomListeners
    let pollInterval: TimeSpan
    let logger: Logger

    private var local = MediaLocalGroups()
    /// The rooms this node's row says it listens in, as last written.
    private var published: Set<String> = []
    /// Per room with a speaker here, the nodes its packets go to (sorted), as the room's relay has them.
    private var targets: [String: [String]] = [:]
    private var pollTimer: TimerID?
    private var stopped = false
    /// Cleared by `stop` (any thread reads it): the media loop's reports stop reaching the database thread, which
    /// ends soon after.
    private let running = Atomic<Bool>(true)

    init(media: MediaServer, endpoint: MediaLinkEndpoint, listeners: PostgresMediaRoomListeners, pollInterval: TimeSpan, logger: Logger) throws {
        self.media = media
        self.endpoint = endpoint
        self.listeners = listeners
        self.pollInterval = pollInterval
        self.logger = logger
        try listeners.removeOwnAndGone()
        endpoint.onPackets { [media] batch in
            media.receiveLinked(batch.map { LinkedPacket(group: $0.packet.room, member: $0.packet.speaker, rtp: $0.packet.rtp) })
        }
        media.observeLocalGroups { [weak self] groups in
            guard let self, running.load(ordering: .acquiring) else { return }
            endpoint.worker.execute { [self] in localGroupsChanged(groups) }
        }
    }

    /// Stops polling, removes every relay and this node's rows (a clean stop). Blocks; call before the endpoint stops.
    func stop() {
        running.store(false, ordering: .releasing)
        endpoint.worker.submitAndWait { [self] in
            stopped = true
            if let pollTimer { endpoint.worker.cancelTimer(pollTimer) }
            pollTimer = nil
            for room in targets.keys { media.setRelay(group: room, nil) }
            targets = [:]
            do { try listeners.removeOwnAndGone() } catch { logger.warning("media listeners not removed", ["error": "\(error)"]) }
        }
        endpoint.onPackets(nil)
    }

    private func localGroupsChanged(_ groups: MediaLocalGroups) {
        guard !stopped else { return }
        local = groups
        poll()
    }

    /// Writes where this node listens if that changed, then brings each sending room's relay up to date.
    private func poll() {
        if let pollTimer { endpoint.worker.cancelTimer(pollTimer) }
        pollTimer = nil
        do {
            if published != local.listening {
                try listeners.update(added: local.listening.subtracting(published), removed: published.subtracting(local.listening))
                published = local.listening
            }
            let found = try listeners.listeners(in: local.sending)
            var next: [String: [String]] = [:]
            for room in local.sending {
                if let nodes = found[room], !nodes.isEmpty { next[room] = nodes.sorted() }
            }
            let nodes = Set(next.values.joined())
            // Keyed before the tap sends anything to them: no first packet goes out without a link.
            for node in nodes.sorted() where endpoint.linkedEpoch(of: node) == nil {
                if case .failure(let error) = endpoint.linkOnWorker(to: node) {
                    logger.warning("media link not set up", ["node": node, "error": error.description])
                    for room in next.keys { next[room]?.removeAll { $0 == node } }
                }
            }
            next = next.filter { !$0.value.isEmpty }
            endpoint.want(Set(next.values.joined()))
            for room in Set(targets.keys).union(next.keys) where targets[room] != next[room] {
                media.setRelay(group: room, next[room].map { LinkOutlet(room: room, nodes: $0, endpoint: endpoint) })
            }
            targets = next
        } catch {
            logger.warning("media listeners not read or written", ["error": "\(error)"])
        }
        if !local.sending.isEmpty || published != local.listening {
            pollTimer = endpoint.worker.schedule(after: pollInterval) { [weak self] in self?.poll() }
        }
    }
}

/// A room's relay: each packet a speaker here may send, sealed once for each node listening in the room, into the
/// media worker's queue.
final class LinkOutlet: MediaPacketRelay {
    let room: String
    let nodes: [String]
    let endpoint: MediaLinkEndpoint

    init(room: String, nodes: [String], endpoint: MediaLinkEndpoint) {
        self.room = room
        self.nodes = nodes
        self.endpoint = endpoint
    }

    func relay(rtp: [UInt8], member: String, into queue: inout UDPSendQueue) {
        endpoint.seal(room: room, speaker: member, rtp: rtp, to: nodes, into: &queue)
    }
}

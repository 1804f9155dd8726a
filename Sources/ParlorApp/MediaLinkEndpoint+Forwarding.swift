import ParlorLoop
import ParlorMedia
import ParlorMediaLink
import ParlorRoomsPostgres

/// The links as the forwarding unit uses them (issue 41): speaker packets queued from the media workers and sealed
/// and sent in batches on the link thread, packets received handed on one batch at a time, and links set up for
/// the nodes the forwarding unit wants and torn down when they have been idle.
extension MediaLinkEndpoint {
    /// A speaker packet for each of `nodes`, as a media worker queued it.
    struct Outgoing {
        let room: String
        let speaker: String
        let rtp: [UInt8]
        let nodes: [String]
    }

    /// Queues `rtp` of `speaker` in `room` for each of `nodes`; the queue goes out on the link thread in one batch of
    /// `sendmmsg` calls, however many workers filled it. Any thread; never blocks on the network.
    public func send(room: String, speaker: String, rtp: [UInt8], to nodes: [String]) {
        let first = outgoing.withLock { queue in
            queue.append(Outgoing(room: room, speaker: speaker, rtp: rtp, nodes: nodes))
            return queue.count == 1
        }
        if first { loop.execute { [self] in sendOutgoing() } }
    }

    /// Where packets received over links go, one batch per read of the socket, on the link thread.
    public func onPackets(_ body: (@Sendable ([(packet: MediaLinkPacket, from: String)]) -> Void)?) {
        batchHandler.withLock { $0 = body }
    }

    /// The nodes the forwarding unit sends to: each gets a link now if it has none (on the database thread, without
    /// waiting), and none of them is torn down while wanted. Any thread.
    public func want(_ nodes: Set<String>) {
        loop.execute { [self] in
            wanted = nodes
            let missing = nodes.filter { links[$0] == nil }
            guard !missing.isEmpty else { return }
            worker.execute { [self] in
                for node in missing.sorted() { _ = linkOnWorker(to: node) }
            }
        }
    }

    /// `link(to:)` on the database thread.
    func linkOnWorker(to nodeID: String) -> Result<UInt32, MediaLinkSetupError> {
        let rows: [PostgresMediaLinkOffers.Published]
        do { rows = try offers.live(exceptNodeID: self.nodeID, nodeID: nodeID) } catch { return .failure(.database("\(error)")) }
        guard let row = rows.first else { return .failure(.noOffer(nodeID: nodeID)) }
        return prepare(row).flatMap { install([$0]).first ?? .failure(.noOffer(nodeID: nodeID)) }
    }

    /// Link thread: seals every queued packet for each of its nodes and sends them in batches.
    func sendOutgoing() {
        let queued = outgoing.withLock { queue in
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
        guard let socket else { return }
        let now = MonotonicClock.now()
        var datagrams: [UDPDatagram] = []
        datagrams.reserveCapacity(queued.count * 2)
        for item in queued {
            for node in item.nodes {
                guard let link = links[node] else {
                    counters.unsent("no_link")
                    continue
                }
                do throws(MediaLinkSealError) {
                    datagrams.append(UDPDatagram(bytes: try link.sender.seal(room: item.room, speaker: item.speaker, rtp: item.rtp),
                                                 destination: link.destination))
                    link.lastActivity = now
                } catch {
                    counters.unsent("unsealable")
                }
            }
        }
        guard !datagrams.isEmpty else { return }
        let sent = socket.send(datagrams)
        counters.sent.add(sent)
        if let tap = sentTap.withLock({ $0 }) { for datagram in datagrams { tap(datagram.bytes, datagram.destination) } }
    }

    /// Link thread: the packets opened since the last call go to the batch handler.
    func flushReceived() {
        guard !received.isEmpty else { return }
        let batch = received
        received.removeAll(keepingCapacity: true)
        batchHandler.withLock { $0 }?(batch)
    }

    /// Link thread, at each renewal: links neither wanted nor used for `idleTeardown` go (their peer's epoch is not
    /// retired: a packet it sends later sets the link up again).
    func tearDownIdleLinks() {
        let now = MonotonicClock.now()
        for (node, link) in links where !wanted.contains(node) && now &- link.lastActivity >= idleTeardown.nanoseconds {
            links[node] = nil
            receivers[link.remoteEpoch] = nil
            counters.tornDown.add()
            counters.links.set(links.count)
            logger.info("media link idle: torn down", ["node": node])
        }
    }
}

import ParlorLoop
import ParlorMedia
import ParlorMediaLink
import ParlorRoomsPostgres

/// The links as the forwarding unit uses them (issue 41): speaker packets sealed on the media worker that decrypted
/// them and sent with its batch from the media port (a hop to the link thread per packet cost a context switch,
/// more than the rest of a link's cost: bench/README.md), packets received handed on one batch at a time, and links
/// set up for the nodes the forwarding unit wants and torn down when they have been idle.
extension MediaLinkEndpoint {
    /// Seals `rtp` of `speaker` in `room` once for each of `nodes` that has a link and appends the datagrams to
    /// `queue` (a media worker's, sent with its batch). Any thread; never blocks on the network.
    public func seal(room: String, speaker: String, rtp: [UInt8], to nodes: [String], into queue: inout UDPSendQueue) {
        let peers = sealers.withLock { $0 }
        let tap = sentTap.withLock { $0 }
        for node in nodes {
            guard let link = peers[node] else {
                counters.unsent("no_link")
                continue
            }
            do throws(MediaLinkSealError) {
                let datagram = try link.sealed(room: room, speaker: speaker, rtp: rtp)
                queue.append(datagram, to: link.destination)
                counters.sent.add()
                tap?(datagram, link.destination)
            } catch {
                counters.unsent("unsealable")
            }
        }
    }

    /// Where packets received over links go, one batch per read of the socket, on the link thread.
    public func onPackets(_ body: (@Sendable ([(packet: MediaLinkPacket, from: String)]) -> Void)?) {
        batchHandler.withLock { $0 = body }
    }

    /// The nodes the forwarding unit sends to (it keys their links itself, `linkOnWorker`): none of them is torn down
    /// while wanted, and a renewal re-keys them when their node restarts. Any thread.
    public func want(_ nodes: Set<String>) {
        loop.execute { [self] in wanted = nodes }
    }

    /// `link(to:)` on the database thread.
    func linkOnWorker(to nodeID: String) -> Result<UInt32, MediaLinkSetupError> {
        let rows: [PostgresMediaLinkOffers.Published]
        do { rows = try offers.live(exceptNodeID: self.nodeID, nodeID: nodeID) } catch { return .failure(.database("\(error)")) }
        guard let row = rows.first else { return .failure(.noOffer(nodeID: nodeID)) }
        return prepare(row).flatMap { install([$0]).first ?? .failure(.noOffer(nodeID: nodeID)) }
    }

    /// Link thread: the packets opened since the last call go to the batch handler (dropped when none is set).
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
            sealers.withLock { [links] in $0 = links }
            counters.tornDown.add()
            counters.links.set(links.count)
            logger.info("media link idle: torn down", ["node": node])
        }
    }
}

extension MediaLinkEndpoint.PeerLink {
    /// One datagram sealed under the link's sender lock.
    func sealed(room: String, speaker: String, rtp: [UInt8]) throws(MediaLinkSealError) -> [UInt8] {
        let result: Result<[UInt8], MediaLinkSealError> = sender.withLock { sender in
            do throws(MediaLinkSealError) { return .success(try sender.seal(room: room, speaker: speaker, rtp: rtp)) } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

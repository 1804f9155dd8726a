import ParlorLoop
import ParlorMedia
import ParlorMediaLink
import ParlorRoomsPostgres

extension MediaLinkEndpoint {
    /// A peer's verified offer and the keys derived with it, made on the worker and installed on the loop.
    struct Prepared: Sendable {
        let keys: MediaLinkKeys
        let destination: TransportAddress
    }

    /// Verifies `row`'s offer and derives the link's keys (worker thread); a refusal is counted by reason.
    func prepare(_ row: PostgresMediaLinkOffers.Published) -> Result<Prepared, MediaLinkSetupError> {
        let remote: LinkOffer
        do throws(LinkOfferError) {
            remote = try LinkOffer.verify(row.offer, secret: secret, nowMilliseconds: Self.nowMilliseconds(), maxAgeMilliseconds: freshnessMilliseconds)
        } catch {
            counters.refusedOffer(Self.refusalReason(error))
            logger.warning("media link offer refused", ["node": row.nodeID, "error": error.description])
            return .failure(.refused(nodeID: row.nodeID, error))
        }
        // The row's node id is only a lookup key: the signed one must be the same.
        guard remote.nodeID == row.nodeID else {
            counters.refusedOffer("malformed")
            return .failure(.refused(nodeID: row.nodeID, .malformed("signed for node \(remote.nodeID)")))
        }
        guard let destination = Self.transportAddress(row.address) else {
            counters.refusedOffer("bad_address")
            return .failure(.badAddress(nodeID: row.nodeID, address: row.address))
        }
        do throws(MediaLinkCryptoError) {
            let keys = try MediaLinkKeys.derive(localOffer: localOffer, localKeyPair: keyPair, remoteOffer: remote)
            return .success(Prepared(keys: keys, destination: destination))
        } catch {
            counters.refusedOffer("bad_key")
            return .failure(.crypto(error))
        }
    }

    /// Installs the links on the loop (replacing a peer's earlier one, whose epoch is then retired), then opens the
    /// datagrams held for an unknown epoch. Worker thread; one result per link, in order.
    func install(_ prepared: [Prepared]) -> [Result<UInt32, MediaLinkSetupError>] {
        loop.submitAndWait { [self] in
            let results = prepared.map { prepared -> Result<UInt32, MediaLinkSetupError> in
                // The same peer epoch means the same keys: a new sender would start its sequence at 0 again and
                // repeat nonces, so the installed link stays.
                if let installed = links[prepared.keys.remoteNodeID], installed.remoteEpoch == prepared.keys.remoteEpoch {
                    return .success(installed.remoteEpoch)
                }
                let link: PeerLink
                do throws(MediaLinkCryptoError) { link = try PeerLink(keys: prepared.keys, destination: prepared.destination) } catch {
                    return .failure(.crypto(error))
                }
                if let old = links[link.nodeID], old.remoteEpoch != link.remoteEpoch {
                    receivers[old.remoteEpoch] = nil
                    retiredEpochs.append(old.remoteEpoch)
                    if retiredEpochs.count > Self.retiredEpochLimit { retiredEpochs.removeFirst() }
                }
                retiredEpochs.removeAll { $0 == link.remoteEpoch }
                links[link.nodeID] = link
                receivers[link.remoteEpoch] = link
                counters.links.set(links.count)
                sealers.withLock { [links] in $0 = links }
                logger.info("media link keyed", ["node": link.nodeID, "address": link.destination.description, "epoch": "\(link.remoteEpoch)"])
                return .success(link.remoteEpoch)
            }
            drainPending()
            return results
        }
    }

    func sendOnLoop(to peer: String, room: String, speaker: String, rtp: [UInt8]) {
        guard let link = links[peer], let socket else {
            counters.unsent("no_link")
            return
        }
        let datagram: [UInt8]
        do throws(MediaLinkSealError) { datagram = try link.sealed(room: room, speaker: speaker, rtp: rtp) } catch {
            counters.unsent("unsealable")
            return
        }
        if socket.send([UDPDatagram(bytes: datagram, destination: link.destination)]) == 1 { counters.sent.add() }
        if let tap = sentTap.withLock({ $0 }) { tap(datagram, link.destination) }
    }

    /// A datagram on the link socket: its header's epoch picks the peer's receiver. Loop thread.
    func received(_ datagram: [UInt8]) {
        guard datagram.count >= MediaLinkPacketFormat.headerLength else {
            counters.dropped("malformed")
            return
        }
        let packetEpoch = Self.epoch(of: datagram)
        guard let link = receivers[packetEpoch] else {
            if retiredEpochs.contains(packetEpoch) {
                counters.dropped("wrong_epoch")
            } else {
                holdForUnknownEpoch(datagram)
            }
            return
        }
        do throws(MediaLinkOpenError) {
            let packet = try link.receiver.open(datagram)
            counters.received.add()
            link.lastActivity = MonotonicClock.now()
            handler.withLock { $0 }?(packet, link.nodeID)
            received.append((packet, link.nodeID))
        } catch {
            counters.dropped(error.counterLabel)
        }
    }

    /// Keeps a datagram of an unknown epoch while the peers' offers are read (once a second at most): a peer that just
    /// linked to this node is learnt without losing its first packets. Anything else of an unknown epoch is dropped.
    private func holdForUnknownEpoch(_ datagram: [UInt8]) {
        let now = MonotonicClock.now()
        guard refreshing || now &- lastRefresh >= 1_000_000_000 || lastRefresh == 0, pending.count < Self.pendingLimit else {
            counters.dropped("unknown_epoch")
            return
        }
        pending.append(datagram)
        guard !refreshing else { return }
        refreshing = true
        lastRefresh = now
        worker.execute { [self] in
            _ = refreshOnWorker(.heldEpochs)
            loop.execute { [self] in
                refreshing = false
                drainPending()
            }
        }
    }

    /// Opens the held datagrams whose epoch is now known, in the order they came: in the same loop task that installed
    /// their link, so none is overtaken by a later one read from the socket. The rest wait while the refresh runs
    /// and are dropped as unknown once it has ended. Loop thread.
    func drainPending() {
        guard !pending.isEmpty else { return }
        let held = pending
        pending = []
        for datagram in held {
            let packetEpoch = Self.epoch(of: datagram)
            if receivers[packetEpoch] != nil || retiredEpochs.contains(packetEpoch) {
                received(datagram)
            } else if refreshing {
                pending.append(datagram)
            } else {
                counters.dropped("unknown_epoch")
            }
        }
        flushReceived()
    }

    /// Every `renewal`: the offer signed again with the current time, then the peers' offers read. Loop thread.
    func scheduleRenewal() {
        renewalTimer = loop.schedule(after: renewal) { [self] in
            worker.execute { [self] in
                do { try publishOffer() } catch { logger.warning("media link offer not renewed", ["error": "\(error)"]) }
                _ = refreshOnWorker(.renewal)
            }
            tearDownIdleLinks()
            scheduleRenewal()
        }
    }

    static func refusalReason(_ error: LinkOfferError) -> String {
        switch error {
        case .badSignature: "bad_signature"
        case .stale: "stale"
        case .fromTheFuture: "future"
        case .malformed, .unsupportedVersion, .secretTooShort, .openSSL: "malformed"
        }
    }

    /// "HOST:PORT" or "[V6]:PORT" with a numeric host.
    static func transportAddress(_ text: String) -> TransportAddress? {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return TransportAddress(host: host, port: port)
    }
}

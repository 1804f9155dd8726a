import ParlorLoop
import ParlorSRTP

extension MediaWorker {
    /// A batch of this worker's datagrams from the receive loop (workers other than 0).
    func receive(_ batch: [Inbound]) {
        loop.assertInLoop()
        let now = MonotonicClock.now()
        for item in batch { receive(item.datagram, from: item.source, key: item.key, now: now) }
        flush()
    }

    /// One DTLS or SRTP datagram from the address of session `key` (the receive loop checked that a valid ICE check
    /// came from there).
    func receive(_ datagram: [UInt8], from source: TransportAddress, key: UInt64, now: UInt64) {
        loop.assertInLoop()
        guard let session = sessions[key] else { return drop() }
        switch MediaPacketKind(datagram) {
        case .dtls:
            handleDTLS(datagram, for: session, from: source, now: now)
        case .rtp where MediaPacketKind.isRTCP(datagram):
            handleRTCP(datagram, from: session, now: now)
        case .rtp:
            handleRTP(datagram, from: session, now: now)
        case .stun, .unknown:
            drop()
        }
    }

    /// Decrypted packets of senders on other workers: each goes to this worker's subscribers of it.
    func receiveHandedOff(_ batch: [HandedOff]) {
        loop.assertInLoop()
        let now = MonotonicClock.now()
        for item in batch {
            handoffsReceived += 1
            guard let subscribers = handedOffForwardTo[item.sender], let header = try? RTPHeader(parsing: item.packet) else { continue }
            forward(item.packet, header: header, to: subscribers, now: now)
        }
        flush()
    }

    private func drop() { dropped += 1 }

    private func handleDTLS(_ datagram: [UInt8], for session: MediaSession, from source: TransportAddress, now: UInt64) {
        let wasConnected = session.dtls.isConnected
        do {
            for reply in try session.dtls.handle(datagram, from: source, now: now) { queue.append(reply, to: source) }
            guard !wasConnected, session.dtls.isConnected else { return }
            let contexts = try session.dtls.keyingMaterial().makeContexts()
            session.outbound = contexts.sender
            session.inbound = contexts.receiver
        } catch {
            // A failed handshake (wrong certificate) or close_notify: the session is over; a new offer starts again.
            logger.debug("media session ended by DTLS", ["error": "\(error)"])
            close(key: session.key, notify: false)
            ended(session.setup, key: session.key)
        }
    }

    /// SRTP from a session: authenticated and decrypted once, counted, its audio level read, then forwarded to the
    /// subscribers whose slots carry it and handed once to each other worker with such subscribers (and to its group's
    /// tap, a recording), if its member may send; dropped otherwise (mutes and stage roles are enforced here, where the packet enters).
    private func handleRTP(_ datagram: [UInt8], from session: MediaSession, now: UInt64) {
        guard let packet = unprotected(datagram, from: session, rtcp: false) else { return drop() }
        decrypted += 1
        guard let header = try? RTPHeader(parsing: packet) else { return drop() }
        session.packetsReceived += 1
        if session.reception?.ssrc != header.ssrc { session.reception = RTPReceptionStatistics(ssrc: header.ssrc) }
        session.reception?.record(sequence: header.sequenceNumber, timestamp: header.timestamp, arrival: now)
        guard session.maySend else {
            session.packetsDropped += 1
            return drop()
        }
        if let id = session.setup.audioLevelExtensionID,
           let level = RTPHeaderExtensions(header: header, packet: packet).audioLevel(id: id, in: packet) {
            let change = session.speaking.record(level: level.level, timestamp: header.timestamp, now: now)
            session.loudness.lastLoudAt.store(session.speaking.lastLoudAt, ordering: .relaxed)
            if let change { emit(.speaking(group: session.setup.group, member: session.member, on: change)) }
        }
        session.tap?.received(rtp: packet, member: session.member, arrival: now)
        session.relay?.relay(rtp: packet, member: session.member, into: &queue)
        forward(packet, header: header, to: session.forwardTo, now: now)
        for target in session.handoffTo {
            outbox[target].append(HandedOff(sender: session.key, packet: packet))
            handedOff += 1
        }
    }

    /// One copy per subscriber: its payload type, its slot's rewriter, its SRTP sender, queued to its address.
    func forward(_ packet: [UInt8], header: RTPHeader, to subscribers: [(session: MediaSession, slot: Int)], now: UInt64) {
        for (subscriber, index) in subscribers {
            guard let outbound = subscriber.outbound, let address = subscriber.address, index < subscriber.slots.count else { continue }
            scratch.removeAll(keepingCapacity: true)
            scratch.append(contentsOf: packet)
            scratch[1] = (scratch[1] & 0x80) | (subscriber.setup.payloadType & 0x7F)
            subscriber.slots[index].rewriter.rewrite(&scratch, header: header, now: now)
            do {
                try outbound.protectRTP(&scratch)
            } catch {
                continue
            }
            queue.append(scratch, to: address)
            forwarded += 1
        }
    }

    /// SRTCP is terminated here: a sender's SR feeds our receiver reports to it; nothing is forwarded.
    private func handleRTCP(_ datagram: [UInt8], from session: MediaSession, now: UInt64) {
        guard let packet = unprotected(datagram, from: session, rtcp: true) else { return drop() }
        guard let packets = try? RTCPPacket.parseCompound(packet) else { return drop() }
        for case .senderReport(let report) in packets where report.ssrc == session.reception?.ssrc {
            session.reception?.record(report, arrival: now)
        }
    }

    /// `datagram` authenticated and decrypted by the session's inbound SRTP (as SRTCP with `rtcp`); nil when it has
    /// none yet or the packet fails: the caller drops it.
    private func unprotected(_ datagram: [UInt8], from session: MediaSession, rtcp: Bool) -> [UInt8]? {
        guard let inbound = session.inbound else { return nil }
        var packet = datagram
        do {
            if rtcp { try inbound.unprotectRTCP(&packet) } else { try inbound.unprotectRTP(&packet) }
        } catch {
            return nil
        }
        return packet
    }
}

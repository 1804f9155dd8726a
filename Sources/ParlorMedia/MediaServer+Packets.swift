import ParlorLoop
import ParlorSRTP

extension MediaServer {
    /// Every datagram on the port, demultiplexed by its first byte (RFC 7983). Only STUN is answered for an unknown
    /// source address: DTLS and SRTP count only from an address a valid check (the signalled password) came from.
    func receive(_ datagram: [UInt8], from source: TransportAddress) {
        loop.assertInLoop()
        let now = MonotonicClock.now()
        switch MediaPacketKind(datagram) {
        case .stun:
            let outcome = responder.handle(datagram, from: source, now: now)
            if let response = outcome.response { queue.append(response, to: source) }
            if outcome.unauthenticated { unauthenticatedRequests += 1 }
            if let request = outcome.request { queue.append(request.bytes, to: request.address) }
            if case .selected(let ufrag, let address, _)? = outcome.event, let session = sessionByUsernameFragment[ufrag] {
                session.address = address
                session.addressLostAt = nil
                session.hadAddress = true
            }
        case .dtls:
            guard let session = session(at: source) else { return drop() }
            handleDTLS(datagram, for: session, from: source, now: now)
        case .rtp:
            guard let session = session(at: source) else { return drop() }
            if MediaPacketKind.isRTCP(datagram) {
                handleRTCP(datagram, from: session, now: now)
            } else {
                handleRTP(datagram, from: session, now: now)
            }
        case .unknown:
            drop()
        }
        // What this queued goes out when the receive batch ends (`flush`): one speaker packet to N subscribers, and
        // everything else the batch brought, cost about N/32 system calls.
    }

    private func session(at address: TransportAddress) -> MediaSession? {
        responder.session(at: address).flatMap { sessionByUsernameFragment[$0] }
    }

    private func drop() { droppedPackets += 1 }

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
            closeSession(session, notify: false)
            emit(.ended(session: session.id, group: session.setup.group))
        }
    }

    /// SRTP from a session: authenticated and decrypted, counted, its audio level read, then forwarded to the
    /// subscribers whose slots carry it, if its member may send; dropped otherwise.
    private func handleRTP(_ datagram: [UInt8], from session: MediaSession, now: UInt64) {
        guard let inbound = session.inbound else { return drop() }
        var packet = datagram
        do {
            try inbound.unprotectRTP(&packet)
        } catch {
            return drop()
        }
        guard let header = try? RTPHeader(parsing: packet) else { return drop() }
        session.packetsReceived += 1
        if session.reception?.ssrc != header.ssrc { session.reception = RTPReceptionStatistics(ssrc: header.ssrc) }
        session.reception?.record(sequence: header.sequenceNumber, timestamp: header.timestamp, arrival: now)
        guard let group = groups[session.setup.group], isSender(session, in: group) else {
            session.packetsDropped += 1
            return drop()
        }
        if let id = session.setup.audioLevelExtensionID,
           let level = RTPHeaderExtensions(header: header, packet: packet).audioLevel(id: id, in: packet),
           let change = session.speaking.record(level: level.level, timestamp: header.timestamp, now: now) {
            emit(.speaking(group: session.setup.group, member: session.member, on: change))
        }
        for (subscriber, index) in session.forwardTo {
            guard let outbound = subscriber.outbound, let address = subscriber.address else { continue }
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
            forwardedPackets += 1
        }
    }

    /// SRTCP is terminated here: a sender's SR feeds our receiver reports to it; nothing is forwarded.
    private func handleRTCP(_ datagram: [UInt8], from session: MediaSession, now: UInt64) {
        guard let inbound = session.inbound else { return drop() }
        var packet = datagram
        do {
            try inbound.unprotectRTCP(&packet)
        } catch {
            return drop()
        }
        guard let packets = try? RTCPPacket.parseCompound(packet) else { return drop() }
        for case .senderReport(let report) in packets where report.ssrc == session.reception?.ssrc {
            session.reception?.record(report, arrival: now)
        }
    }
}

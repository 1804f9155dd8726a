import ParlorLoop

extension MediaServer {
    /// Every datagram on the port, demultiplexed by its first byte (RFC 7983). STUN is answered here (the one ICE
    /// responder); DTLS and SRTP count only from an address a valid check (the signalled password) came from, and go
    /// to the worker that owns that address's session: at once for worker 0, in one hand-over per batch for the others.
    func receive(_ datagram: [UInt8], from source: TransportAddress) {
        loop.assertInLoop()
        let now = MonotonicClock.now()
        switch MediaPacketKind(datagram) {
        case .stun:
            let outcome = responder.handle(datagram, from: source, now: now)
            if let response = outcome.response { queue.append(response, to: source) }
            if outcome.unauthenticated { unauthenticatedRequests += 1 }
            if let request = outcome.request { queue.append(request.bytes, to: request.address) }
            if case .selected(let ufrag, let address, _)? = outcome.event, let record = recordByUsernameFragment[ufrag] {
                let key = record.key
                workers[record.worker].run { $0.setAddress(key: key, address) }
            }
        case .dtls, .rtp:
            guard let ufrag = responder.session(at: source), let record = recordByUsernameFragment[ufrag] else {
                receiveDropped += 1
                return
            }
            if record.worker == 0 {
                workers[0].receive(datagram, from: source, key: record.key, now: now)
            } else {
                pending[record.worker].append(MediaWorker.Inbound(datagram: datagram, source: source, key: record.key))
            }
        case .unknown:
            receiveDropped += 1
        }
        // What this queued goes out when the receive batch ends (`flush`): one speaker packet to N subscribers, and
        // everything else the batch brought, cost about N/32 system calls.
    }
}

import ParlorLoop
import ParlorSRTP

extension MediaWorker: MediaTimers {
    /// Every `tickInterval`: DTLS retransmissions, speaking that ended (also when packets stopped coming), and
    /// sessions without an address for `addressGracePeriod` (or that never completed ICE in `setupTimeout`) ended.
    func tick() {
        loop.assertInLoop()
        let now = MonotonicClock.now()
        var expired: [MediaSession] = []
        for session in sessions.values {
            if let deadline = session.dtls.retransmissionDeadline, now >= deadline, let address = session.address {
                for datagram in session.dtls.handleTimeout(now: now) { queue.append(datagram, to: address) }
            }
            if session.speaking.check(now: now) == false {
                emit(.speaking(group: session.setup.group, member: session.member, on: false))
            }
            let limit = session.hadAddress ? configuration.addressGracePeriod : configuration.setupTimeout
            if session.address == nil, now &- (session.addressLostAt ?? session.openedAt) >= limit.nanoseconds {
                expired.append(session)
            }
        }
        for session in expired {
            close(key: session.key, notify: false)
            ended(session.setup, key: session.key)
        }
        socket.send(&queue)
        if sessions.isEmpty { tickTimer = nil } else { armTick() }
    }

    /// Every `reportInterval`: a receiver report to each sender (RFC 3550 §6.4.2, from what arrived).
    func report() {
        loop.assertInLoop()
        let now = MonotonicClock.now()
        for session in sessions.values {
            guard let outbound = session.outbound, let address = session.address, session.reception != nil else { continue }
            guard let block = session.reception?.reportBlock(now: now) else { continue }
            var packet = ReceiverReport(senderSSRC: session.reportSSRC, blocks: [block]).serialized()
            do {
                try outbound.protectRTCP(&packet)
            } catch {
                continue
            }
            queue.append(packet, to: address)
        }
        socket.send(&queue)
        if sessions.isEmpty { reportTimer = nil } else { armReport() }
    }
}

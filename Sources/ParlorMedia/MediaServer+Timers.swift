import ParlorLoop
import ParlorSRTP

extension MediaServer {
    /// Starts the tick and the report when the first session opens. They stop once no session is left, so a server
    /// without media sessions never wakes for them (it did ten times a second).
    func startTimersIfStopped() {
        loop.assertInLoop()
        if tickTimer == nil { armTick() }
        if reportTimer == nil { armReport() }
    }

    private func armTick() {
        tickTimer = loop.schedule(after: configuration.tickInterval) { [weak self] in self?.tick() }
    }

    private func armReport() {
        reportTimer = loop.schedule(after: configuration.reportInterval) { [weak self] in self?.report() }
    }

    /// Every `tickInterval`: DTLS retransmissions, speaking that ended (also when packets stopped coming), consent
    /// that expired (RFC 7675: the session stops being sent to), and sessions without an address for
    /// `addressGracePeriod` dropped.
    func tick() {
        loop.assertInLoop()
        let now = MonotonicClock.now()
        for request in responder.pendingRequests(now: now) { queue.append(request.bytes, to: request.address) }
        for ufrag in responder.expireConsent(now: now) {
            guard let session = sessionByUsernameFragment[ufrag] else { continue }
            session.address = nil
            session.addressLostAt = now
        }
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
            closeSession(session, notify: false)
            emit(.ended(session: session.id, group: session.setup.group))
        }
        socket.send(&queue)
        if sessions.isEmpty { tickTimer = nil } else { armTick() }
    }

    /// Every `reportInterval`: a receiver report to each sender (RFC 3550 §6.4.2, from what arrived), and the slots
    /// reconsidered where a group has several senders (with more senders than slots the loudest recent ones get them).
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
        // Cheap when nothing changes (no event); needed whenever a subscriber has fewer slots than the group has senders.
        for (name, group) in groups where group.sessions.count(where: { isSender($0, in: group) }) > 1 {
            reassignSlots(in: name)
        }
        if sessions.isEmpty { reportTimer = nil } else { armReport() }
    }
}

import ParlorLoop

extension MediaServer: MediaTimers {
    /// Every `tickInterval`: our consent checks and their retransmissions, and consent that expired (RFC 7675: the
    /// session's worker stops sending to it, and ends it after `addressGracePeriod`).
    func tick() {
        loop.assertInLoop()
        let now = MonotonicClock.now()
        for request in responder.pendingRequests(now: now) { queue.append(request.bytes, to: request.address) }
        for ufrag in responder.expireConsent(now: now) {
            guard let record = recordByUsernameFragment[ufrag] else { continue }
            let key = record.key
            workers[record.worker].run { $0.loseAddress(key: key, now: now) }
        }
        socket.send(&queue)
        if records.isEmpty, remoteSenderCount == 0 { tickTimer = nil } else { armTick() }
    }

    /// Every `reportInterval`: the slots reconsidered where a group has several senders (with more senders than
    /// slots the loudest recent ones get them). The workers send their receiver reports on their own timers.
    func report() {
        loop.assertInLoop()
        // Cheap when nothing changes (no event, no plan); needed whenever a subscriber has fewer slots than the group has senders.
        let now = MonotonicClock.now()
        for (name, group) in groups {
            // Speakers on other nodes whose packets stopped (their node died, or stopped sending) give up their slots.
            let pruned = pruneRemoteSenders(of: name, now: now)
            if pruned || group.records.count(where: { isSender($0, in: group) }) + group.remote.count > 1 { reassignSlots(in: name) }
        }
        if records.isEmpty, remoteSenderCount == 0 { reportTimer = nil } else { armReport() }
    }
}

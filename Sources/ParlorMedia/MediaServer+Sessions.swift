import ParlorLoop

extension MediaServer {
    func openSession(_ setup: MediaSessionSetup) {
        loop.assertInLoop()
        if let old = sessions[setup.id] {
            // The same peer connection renegotiating (same certificate, same group): it keeps DTLS and SRTP, as the
            // browser does; only a changed ICE ufrag (an ICE restart) re-registers its credentials.
            if old.setup.remoteFingerprint == setup.remoteFingerprint, old.setup.group == setup.group, old.member == setup.member {
                return renegotiate(old, setup)
            }
            closeSession(old, notify: false)
        }
        let dtls: DTLSTransport
        do {
            dtls = try DTLSTransport(context: context, expectedRemoteFingerprint: setup.remoteFingerprint)
        } catch {
            logger.error("media session could not start DTLS", ["error": "\(error)"])
            return
        }
        let session = MediaSession(setup: setup, dtls: dtls, now: MonotonicClock.now())
        sessions[setup.id] = session
        startTimersIfStopped()
        metrics?.mediaSessions.set(sessions.count)
        sessionByUsernameFragment[setup.local.usernameFragment] = session
        responder.addSession(local: setup.local, remote: setup.remoteICE)
        groups[setup.group, default: MediaGroup()].sessions.append(session)
        reassignSlots(in: setup.group)
    }

    private func renegotiate(_ session: MediaSession, _ setup: MediaSessionSetup) {
        let previous = session.setup
        if previous.local != setup.local || previous.remoteICE != setup.remoteICE {
            sessionByUsernameFragment[previous.local.usernameFragment] = nil
            responder.removeSession(usernameFragment: previous.local.usernameFragment)
            sessionByUsernameFragment[setup.local.usernameFragment] = session
            responder.addSession(local: setup.local, remote: setup.remoteICE)
        }
        session.update(setup)
        if !setup.sends, session.speaking.reset() == false { emit(.speaking(group: setup.group, member: setup.member, on: false)) }
        reassignSlots(in: setup.group)
    }

    /// Removes a session; `notify`: send close_notify to its address.
    func closeSession(_ session: MediaSession, notify: Bool) {
        loop.assertInLoop()
        guard sessions[session.id] === session else { return }
        sessions[session.id] = nil
        metrics?.mediaSessions.set(sessions.count)
        sessionByUsernameFragment[session.setup.local.usernameFragment] = nil
        responder.removeSession(usernameFragment: session.setup.local.usernameFragment)
        let alert = session.dtls.close()
        if notify, let address = session.address {
            for datagram in alert { queue.append(datagram, to: address) }
            socket.send(&queue)
        }
        if session.speaking.reset() == false { emit(.speaking(group: session.setup.group, member: session.member, on: false)) }
        let name = session.setup.group
        groups[name]?.sessions.removeAll { $0 === session }
        session.forwardTo = []
        for index in session.slots.indices { session.slots[index].source = nil }
        if let group = groups[name], group.sessions.isEmpty, group.senders.isEmpty {
            groups[name] = nil
        } else {
            reassignSlots(in: name)
        }
        closedSinceTrim += 1
        if closedSinceTrim >= configuration.trimAfterClosedSessions || sessions.isEmpty {
            closedSinceTrim = 0
            MallocArenas.trim()
        }
    }

    func updateSenders(group name: String, members: Set<String>) {
        loop.assertInLoop()
        var group = groups[name] ?? MediaGroup()
        guard group.senders != members || groups[name] == nil else { return }
        group.senders = members
        if group.sessions.isEmpty, members.isEmpty {
            groups[name] = nil
            return
        }
        groups[name] = group
        for session in group.sessions where !members.contains(session.member) {
            if session.speaking.reset() == false { emit(.speaking(group: name, member: session.member, on: false)) }
        }
        reassignSlots(in: name)
    }

    /// Whether a session's packets are forwarded: its member may send and its offer sends.
    func isSender(_ session: MediaSession, in group: MediaGroup) -> Bool {
        session.setup.sends && group.senders.contains(session.member)
    }

    /// Gives every subscriber of the group the group's senders other than its own member, the loudest recent ones
    /// when there are more senders than slots; a sender keeps its slot while it stays chosen. Reports each
    /// subscriber whose assignment changed (a new session's first senders too), then rebuilds the fan-out.
    func reassignSlots(in name: String) {
        loop.assertInLoop()
        guard let group = groups[name] else { return }
        let senders = group.sessions.filter { isSender($0, in: group) }
        // Loudest recent first; the order they opened breaks ties (a stable sort keeps it).
        let ranked = senders.count < 2 ? senders
            : senders.enumerated().sorted { ($0.element.speaking.lastLoudAt, -$0.offset) > ($1.element.speaking.lastLoudAt, -$1.offset) }.map(\.element)
        for sender in group.sessions { sender.forwardTo.removeAll(keepingCapacity: true) }
        for subscriber in group.sessions {
            let chosen = ranked.lazy.filter { $0.member != subscriber.member }.prefix(subscriber.slots.count)
            // By identity: a session replaced under the same id is another sender.
            let chosenIDs = Set(chosen.map(ObjectIdentifier.init))
            var changed = false
            for index in subscriber.slots.indices {
                if let source = subscriber.slots[index].source, !chosenIDs.contains(ObjectIdentifier(source)) {
                    subscriber.slots[index].source = nil
                    changed = true
                }
            }
            let placed = Set(subscriber.slots.compactMap { $0.source.map(ObjectIdentifier.init) })
            var free = subscriber.slots.indices.filter { subscriber.slots[$0].source == nil }.makeIterator()
            for sender in chosen where !placed.contains(ObjectIdentifier(sender)) {
                guard let index = free.next() else { break }
                subscriber.slots[index].source = sender
                changed = true
            }
            for (index, slot) in subscriber.slots.enumerated() {
                slot.source?.forwardTo.append((subscriber, index))
            }
            if changed {
                emit(.slots(session: subscriber.id, group: name, subscriber.assignments))
            }
        }
    }
}

import ParlorLoop

extension MediaServer {
    func openSession(_ setup: MediaSessionSetup) {
        loop.assertInLoop()
        if let old = records[setup.id] {
            // The same peer connection renegotiating (same certificate, same group): it keeps DTLS and SRTP, as the
            // browser does; only a changed ICE ufrag (an ICE restart) re-registers its credentials.
            if old.setup.remoteFingerprint == setup.remoteFingerprint, old.setup.group == setup.group, old.member == setup.member {
                return renegotiate(old, setup)
            }
            closeSession(old, notify: false)
        }
        nextKey += 1
        // The worker with the fewest sessions owns it for its life; ties go to the lowest index.
        let worker = sessionsPerWorker.indices.min { sessionsPerWorker[$0] < sessionsPerWorker[$1] } ?? 0
        let record = MediaSessionRecord(setup: setup, key: nextKey, worker: worker)
        records[setup.id] = record
        sessionsPerWorker[worker] += 1
        startTimersIfStopped()
        metrics?.mediaSessions.set(records.count)
        recordByUsernameFragment[setup.local.usernameFragment] = record
        responder.addSession(local: setup.local, remote: setup.remoteICE)
        groups[setup.group, default: MediaGroup()].records.append(record)
        let (key, loudness) = (record.key, record.loudness)
        workers[worker].run { $0.open(setup, key: key, loudness: loudness) }
        reassignSlots(in: setup.group)
    }

    private func renegotiate(_ record: MediaSessionRecord, _ setup: MediaSessionSetup) {
        let previous = record.setup
        if previous.local != setup.local || previous.remoteICE != setup.remoteICE {
            recordByUsernameFragment[previous.local.usernameFragment] = nil
            responder.removeSession(usernameFragment: previous.local.usernameFragment)
            recordByUsernameFragment[setup.local.usernameFragment] = record
            responder.addSession(local: setup.local, remote: setup.remoteICE)
        }
        record.update(setup)
        let key = record.key
        workers[record.worker].run { $0.renegotiate(key: key, setup) }
        reassignSlots(in: setup.group)
    }

    /// Removes a session; `notify`: its worker sends close_notify to its address.
    func closeSession(_ record: MediaSessionRecord, notify: Bool) {
        loop.assertInLoop()
        forget(record)
        let key = record.key
        workers[record.worker].run { $0.close(key: key, notify: notify) }
        regroup(after: record)
    }

    /// A worker ended a session by itself: forgotten here, and the owner told.
    func workerEnded(session id: UInt64, key: UInt64) {
        loop.assertInLoop()
        guard let record = records[id], record.key == key else { return }
        forget(record)
        regroup(after: record)
        emit(.ended(session: id, group: record.setup.group))
    }

    private func forget(_ record: MediaSessionRecord) {
        records[record.id] = nil
        sessionsPerWorker[record.worker] -= 1
        metrics?.mediaSessions.set(records.count)
        recordByUsernameFragment[record.setup.local.usernameFragment] = nil
        responder.removeSession(usernameFragment: record.setup.local.usernameFragment)
    }

    private func regroup(after record: MediaSessionRecord) {
        let name = record.setup.group
        groups[name]?.records.removeAll { $0 === record }
        if let group = groups[name], group.records.isEmpty, group.senders.isEmpty {
            closeRemoteSenders(of: group)
            groups[name] = nil
            broadcast(MediaGroupPlan(), group: name)
            reportLocalGroup(name)
        } else {
            reassignSlots(in: name)
        }
    }

    func updateSenders(group name: String, members: Set<String>) {
        loop.assertInLoop()
        var group = groups[name] ?? MediaGroup()
        guard group.senders != members || groups[name] == nil else { return }
        group.senders = members
        if group.records.isEmpty, members.isEmpty {
            closeRemoteSenders(of: group)
            groups[name] = nil
            reportLocalGroup(name)
            return
        }
        groups[name] = group
        pruneRemoteSenders(of: name)
        reassignSlots(in: name)
    }

    /// Whether a session's packets are forwarded: its member may send and its offer sends.
    func isSender(_ record: MediaSessionRecord, in group: MediaGroup) -> Bool {
        record.setup.sends && group.senders.contains(record.member)
    }

    /// Gives every subscriber of the group the group's senders other than its own member (local sessions and speakers
    /// on other nodes alike), the loudest recent ones when there are more senders than slots; a sender keeps its slot
    /// while it stays chosen. Reports each subscriber whose assignment changed (a new session's first senders too),
    /// then gives the workers the new plan.
    func reassignSlots(in name: String) {
        loop.assertInLoop()
        defer { reportLocalGroup(name) }
        guard var group = groups[name] else { return }
        // Local senders in the order they opened, then remote ones by key (the order they were first heard).
        // A remote speaker whose node says it speaks counts as loud now (its node reads the audio level, not this one).
        let now = MonotonicClock.now()
        let senders = group.records.filter { isSender($0, in: group) }
            .map { SlotCandidate(key: $0.key, member: $0.member, lastLoudAt: $0.loudness.lastLoudAt.load(ordering: .relaxed)) }
            + group.remote.values.sorted { $0.key < $1.key }
            .map { SlotCandidate(key: $0.key, member: $0.member, lastLoudAt: $0.speaking ? now : $0.loudness.lastLoudAt.load(ordering: .relaxed)) }
        // Loudest recent first; that order breaks ties (a stable sort keeps it).
        let ranked = senders.count < 2 ? senders
            : senders.enumerated().map { ($0.element.lastLoudAt, $0.offset, $0.element) }.sorted { ($0.0, -$0.1) > ($1.0, -$1.1) }.map(\.2)
        var memberByKey = Dictionary(group.records.map { ($0.key, $0.member) }, uniquingKeysWith: { first, _ in first })
        for record in group.remote.values { memberByKey[record.key] = record.member }
        for subscriber in group.records {
            let chosen = ranked.lazy.filter { $0.member != subscriber.member }.prefix(subscriber.sources.count)
            let chosenKeys = Set(chosen.map(\.key))
            var changed = false
            for index in subscriber.sources.indices {
                if let source = subscriber.sources[index], !chosenKeys.contains(source) {
                    subscriber.sources[index] = nil
                    changed = true
                }
            }
            let placed = Set(subscriber.sources.compactMap { $0 })
            var free = subscriber.sources.indices.filter { subscriber.sources[$0] == nil }.makeIterator()
            for sender in chosen where !placed.contains(sender.key) {
                guard let index = free.next() else { break }
                subscriber.sources[index] = sender.key
                changed = true
            }
            if changed {
                let assignments = zip(subscriber.setup.slots, subscriber.sources).map { slot, source in
                    MediaSlotAssignment(mid: slot.mid, member: source.flatMap { memberByKey[$0] })
                }
                emit(.slots(session: subscriber.id, group: name, assignments))
            }
        }
        let plan = MediaGroupPlan(senders: Set(senders.map(\.key)),
                                  subscribers: group.records.map { .init(key: $0.key, worker: $0.worker, sources: $0.sources) })
        guard plan != group.plan else { return }
        group.plan = plan
        groups[name] = group
        broadcast(plan, group: name)
    }

    /// Every worker takes the plan (one with no sessions of the group forgets it), in the order plans were made.
    private func broadcast(_ plan: MediaGroupPlan, group name: String) {
        for worker in workers { worker.run { $0.apply(plan, group: name) } }
    }
}

/// A sender as the slots rank it: a local session or a speaker on another node.
struct SlotCandidate {
    let key: UInt64
    let member: String
    /// When it was last loud (monotonic ns), read once for the ranking.
    let lastLoudAt: UInt64
}

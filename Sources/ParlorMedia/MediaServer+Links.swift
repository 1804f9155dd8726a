import ParlorLoop

/// One speaker packet that crossed a media link from the node where the speaker's session is (issue 41): decrypted
/// there once, with the rules of the room applied there; here it is forwarded to this node's own subscribers.
public struct LinkedPacket: Sendable {
    public var group: String
    public var member: String
    public var rtp: [UInt8]

    public init(group: String, member: String, rtp: [UInt8]) {
        self.group = group
        self.member = member
        self.rtp = rtp
    }
}

/// Which groups this node's forwarding unit takes part in, as the links need it (issue 41): `listening`, the groups
/// with a session that receives (a slot) or a recording or live-stream tap; `sending`, those with a session whose
/// packets are forwarded (its member may send).
public struct MediaLocalGroups: Sendable, Equatable {
    public var listening: Set<String> = []
    public var sending: Set<String> = []

    public init(listening: Set<String> = [], sending: Set<String> = []) {
        self.listening = listening
        self.sending = sending
    }
}

/// A speaker whose session is on another node, as the receive loop keeps it: a sender of its group like a local one
/// (ranked for the slots, carried by subscribers' slots), whose packets come from a link instead of the port. It is
/// forgotten when its packets stop for `remoteSenderTimeout` or its member may no longer send.
final class RemoteSenderRecord {
    let key: UInt64
    let member: String
    let worker: Int
    let loudness = SessionLoudness()
    /// Whether its node last said it speaks: while it does, the slots rank it as loud now.
    var speaking = false
    var lastPacketAt: UInt64

    init(key: UInt64, member: String, worker: Int, now: UInt64) {
        self.key = key
        self.member = member
        self.worker = worker
        lastPacketAt = now
    }
}

extension MediaServer {
    /// How long a remote speaker stays a sender of its group without a packet: a node that died takes its speakers'
    /// slots with it after this long (Opus with DTX still sends a packet every 400 ms in silence).
    static let remoteSenderTimeout: UInt64 = 3_000_000_000

    /// Packets of speakers on other nodes, in the order they came (any thread). Each is forwarded to the group's
    /// subscribers here and tapped by its recording, if its member may send in the group as this node knows it and
    /// the group has a subscriber or a tap here; dropped otherwise.
    public func receiveLinked(_ packets: [LinkedPacket]) {
        loop.execute { [self] in
            let now = MonotonicClock.now()
            var regrouped: Set<String> = []
            var batches = Array(repeating: [MediaWorker.HandedOff](), count: workers.count)
            for packet in packets {
                guard let record = remoteSender(packet, now: now, regrouped: &regrouped) else {
                    linkedDropped += 1
                    continue
                }
                record.lastPacketAt = now
                batches[record.worker].append(MediaWorker.HandedOff(sender: record.key, packet: packet.rtp))
            }
            for name in regrouped { reassignSlots(in: name) }
            for (index, batch) in batches.enumerated() where !batch.isEmpty {
                workers[index].run { $0.receiveLinked(batch) }
            }
            metrics?.mediaPacketsDropped.add(linkedDropped - reportedLinkedDropped)
            reportedLinkedDropped = linkedDropped
        }
    }

    /// A speaker on another node started or stopped speaking (its node decided, and told every node): the slots rank
    /// it by that, as they rank local speakers by their audio level. Any thread.
    public func remoteSpeaking(group: String, member: String, on: Bool) {
        loop.execute { [self] in
            guard let record = groups[group]?.remote[member] else { return }
            record.speaking = on
            record.loudness.lastLoudAt.store(MonotonicClock.now(), ordering: .relaxed)
        }
    }

    /// Calls `body` with the groups this node listens and sends in, at once and after every change (on the receive
    /// loop; it must return at once). Any thread.
    public func observeLocalGroups(_ body: @escaping @Sendable (MediaLocalGroups) -> Void) {
        loop.execute { [self] in
            localGroupsObserver = body
            body(reportedLocalGroups)
        }
    }

    /// The group's record of `packet`'s speaker, made now (and the group marked for new slots) when it is new.
    private func remoteSender(_ packet: LinkedPacket, now: UInt64, regrouped: inout Set<String>) -> RemoteSenderRecord? {
        guard var group = groups[packet.group], group.senders.contains(packet.member) else { return nil }
        if let record = group.remote[packet.member] { return record }
        // Kept while the group has a subscriber or a tap (a group that stops listening drops its remote speakers
        // when they time out: the speaker's node learns within a poll that it no longer needs to send).
        guard isListening(packet.group, group) else { return nil }
        // A member whose own session sends here (a second connection through this node) is heard from here.
        guard !group.records.contains(where: { $0.member == packet.member && isSender($0, in: group) }) else { return nil }
        nextKey += 1
        let worker = sessionsPerWorker.indices.min { sessionsPerWorker[$0] < sessionsPerWorker[$1] } ?? 0
        let record = RemoteSenderRecord(key: nextKey, member: packet.member, worker: worker, now: now)
        group.remote[packet.member] = record
        groups[packet.group] = group
        remoteSenderCount += 1
        startTimersIfStopped()
        let (key, name, member) = (record.key, packet.group, packet.member)
        workers[worker].run { $0.openRemote(key: key, group: name, member: member) }
        regrouped.insert(packet.group)
        return record
    }

    /// Forgets the group's remote speakers that may no longer send, or (with `now`) whose packets stopped; true when
    /// any went.
    @discardableResult
    func pruneRemoteSenders(of name: String, now: UInt64? = nil) -> Bool {
        guard var group = groups[name], !group.remote.isEmpty else { return false }
        let gone = group.remote.values.filter { record in
            !group.senders.contains(record.member) || now.map { $0 &- record.lastPacketAt >= Self.remoteSenderTimeout } ?? false
        }
        guard !gone.isEmpty else { return false }
        for record in gone {
            group.remote[record.member] = nil
            let key = record.key
            workers[record.worker].run { $0.closeRemote(key: key) }
        }
        remoteSenderCount -= gone.count
        groups[name] = group
        return true
    }

    /// Forgets every remote speaker of a group that is going away.
    func closeRemoteSenders(of group: MediaGroup) {
        for record in group.remote.values {
            let key = record.key
            workers[record.worker].run { $0.closeRemote(key: key) }
        }
        remoteSenderCount -= group.remote.count
    }

    /// Whether packets of the group's remote speakers have anywhere to go here: a subscriber, a recording, a live stream.
    func isListening(_ name: String, _ group: MediaGroup) -> Bool {
        group.records.contains { !$0.setup.slots.isEmpty } || !(listeningTaps[name]?.isEmpty ?? true)
    }

    /// After a change to a group: the observer hears the new sets when the group's place in them changed.
    func reportLocalGroup(_ name: String) {
        let group = groups[name]
        let listening = group.map { isListening(name, $0) } ?? !(listeningTaps[name]?.isEmpty ?? true)
        let sending = group.map { group in group.records.contains { isSender($0, in: group) } } ?? false
        var now = reportedLocalGroups
        if listening { now.listening.insert(name) } else { now.listening.remove(name) }
        if sending { now.sending.insert(name) } else { now.sending.remove(name) }
        guard now != reportedLocalGroups else { return }
        reportedLocalGroups = now
        localGroupsObserver?(now)
    }
}

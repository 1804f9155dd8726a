import ParlorLoop

/// A speaker on another node, as the worker that takes its linked packets keeps it (MediaServer+Links.swift): like a
/// local sender without DTLS or SRTP, its packets already decrypted and checked where they entered.
final class RemoteSender {
    let key: UInt64
    let group: String
    let member: String
    /// This worker's subscribers whose slots carry it, and the other workers with such subscribers (the group's plan).
    var forwardTo: [(session: MediaSession, slot: Int)] = []
    var handoffTo: [Int] = []
    /// The group's recording and live-stream taps (no relay: each node sends only its own speakers to other nodes).
    var tap: (any MediaPacketTap)?

    init(key: UInt64, group: String, member: String) {
        self.key = key
        self.group = group
        self.member = member
    }
}

extension MediaWorker {
    func openRemote(key: UInt64, group: String, member: String) {
        loop.assertInLoop()
        let sender = RemoteSender(key: key, group: group, member: member)
        sender.tap = combinedTap(of: group)
        remoteSenders[key] = sender
        groupRemoteSenders[group, default: []].append(sender)
    }

    func closeRemote(key: UInt64) {
        loop.assertInLoop()
        guard let sender = remoteSenders.removeValue(forKey: key) else { return }
        groupRemoteSenders[sender.group]?.removeAll { $0 === sender }
        if groupRemoteSenders[sender.group]?.isEmpty == true { groupRemoteSenders[sender.group] = nil }
    }

    /// Linked packets of the remote speakers this worker takes: tapped, forwarded to its own subscribers, and handed
    /// once to each other worker with subscribers of them, as a local speaker's decrypted packets are.
    func receiveLinked(_ batch: [HandedOff]) {
        loop.assertInLoop()
        let now = MonotonicClock.now()
        for item in batch {
            guard let sender = remoteSenders[item.sender], let header = try? RTPHeader(parsing: item.packet) else {
                dropped += 1
                continue
            }
            linkedReceived += 1
            sender.tap?.received(rtp: item.packet, member: sender.member, arrival: now)
            forward(item.packet, header: header, to: sender.forwardTo, now: now)
            for target in sender.handoffTo {
                outbox[target].append(item)
                handedOff += 1
            }
        }
        flush()
    }
}

/// Receives each authenticated, decrypted RTP packet of a group's permitted senders, on the worker that decrypted it
/// (issue 38: a recording taps the packets where they enter). `received` runs on a media worker's thread for every
/// packet: it must return at once (hand the packet to a queue of its own), never block.
public protocol MediaPacketTap: AnyObject, Sendable {
    /// `rtp`: the whole packet, header included; `arrival`: the worker's monotonic clock (CLOCK_MONOTONIC, ns).
    func received(rtp: [UInt8], member: String, arrival: UInt64)
}

/// What a tap is for: a group has at most one of each, and they compose (a room recorded and streamed live at once).
public enum MediaTapPurpose: Sendable, Hashable, CaseIterable {
    case recording
    case liveStream
}

/// Sends a group's speakers' packets on to other nodes (issue 41): called on the media worker that decrypted each
/// packet a local speaker may send (never one that came over a link), it appends what to send (one sealed datagram
/// per node) to the worker's queue, which goes out with the worker's batch. It must return at once, never block.
public protocol MediaPacketRelay: AnyObject, Sendable {
    func relay(rtp: [UInt8], member: String, into queue: inout UDPSendQueue)
}

extension MediaServer {
    /// Installs `tap` as `group`'s tap for `purpose` (nil removes it), replacing any other for that purpose and leaving
    /// the others. Any thread, without waiting; it reaches every worker in call order with `open` and `setSenders`, so
    /// a session opened after this call is tapped from its first packet. Packets of open sessions already on their way
    /// to a worker may arrive before the change does.
    public func setTap(group: String, purpose: MediaTapPurpose = .recording, _ tap: (any MediaPacketTap)?) {
        loop.execute { [self] in
            if tap == nil { listeningTaps[group]?.remove(purpose) } else { listeningTaps[group, default: []].insert(purpose) }
            if listeningTaps[group]?.isEmpty == true { listeningTaps[group] = nil }
            for worker in workers { worker.run { $0.setTap(group: group, purpose: purpose, tap) } }
            reportLocalGroup(group)
        }
    }

    /// Installs `relay` for `group`'s local speakers (nil removes it). Any thread, without waiting; in call order with
    /// `open` and `setSenders`, like `setTap`.
    public func setRelay(group: String, _ relay: (any MediaPacketRelay)?) {
        loop.execute { [self] in
            for worker in workers { worker.run { $0.setRelay(group: group, relay) } }
        }
    }
}

extension MediaWorker {
    /// Keeps the group's taps and puts them, as one, on each of the group's sessions, where `handleRTP` finds it
    /// without a lookup.
    func setTap(group: String, purpose: MediaTapPurpose, _ tap: (any MediaPacketTap)?) {
        loop.assertInLoop()
        taps[group, default: [:]][purpose] = tap
        if taps[group]?.isEmpty == true { taps[group] = nil }
        let combined = combinedTap(of: group)
        for session in groupSessions[group] ?? [] { session.tap = combined }
        for sender in groupRemoteSenders[group] ?? [] { sender.tap = combined }
    }

    func setRelay(group: String, _ relay: (any MediaPacketRelay)?) {
        loop.assertInLoop()
        relays[group] = relay
        for session in groupSessions[group] ?? [] { session.relay = relay }
    }

    /// The group's taps as the one a session calls: none, the only one, or each in turn.
    func combinedTap(of group: String) -> (any MediaPacketTap)? {
        guard let taps = taps[group], !taps.isEmpty else { return nil }
        if taps.count == 1 { return taps.first!.value }
        return TapSet(MediaTapPurpose.allCases.compactMap { taps[$0] })
    }
}

/// Several taps of one group, each handed every packet.
private final class TapSet: MediaPacketTap {
    let taps: [any MediaPacketTap]

    init(_ taps: [any MediaPacketTap]) { self.taps = taps }

    func received(rtp: [UInt8], member: String, arrival: UInt64) {
        for tap in taps { tap.received(rtp: rtp, member: member, arrival: arrival) }
    }
}

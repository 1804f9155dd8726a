/// Receives each authenticated, decrypted RTP packet of a group's permitted senders, on the worker that decrypted it
/// (issue 38: a recording taps the packets where they enter). `received` runs on a media worker's thread for every
/// packet: it must return at once (hand the packet to a queue of its own), never block.
public protocol MediaPacketTap: AnyObject, Sendable {
    /// `rtp`: the whole packet, header included; `arrival`: the worker's monotonic clock (CLOCK_MONOTONIC, ns).
    func received(rtp: [UInt8], member: String, arrival: UInt64)
}

extension MediaServer {
    /// Installs `tap` for `group` (nil removes it), replacing any other. Any thread, without waiting; it reaches every
    /// worker in call order with `open` and `setSenders`, so a session opened after this call is tapped from its
    /// first packet. Packets of open sessions already on their way to a worker may arrive before the change does.
    public func setTap(group: String, _ tap: (any MediaPacketTap)?) {
        loop.execute { [self] in
            for worker in workers { worker.run { $0.setTap(group: group, tap) } }
        }
    }
}

extension MediaWorker {
    /// Keeps the group's tap and puts it on each of the group's sessions, where `handleRTP` finds it without a lookup.
    func setTap(group: String, _ tap: (any MediaPacketTap)?) {
        loop.assertInLoop()
        taps[group] = tap
        for session in groupSessions[group] ?? [] { session.tap = tap }
    }
}

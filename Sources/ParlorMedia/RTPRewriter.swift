/// Rewrites one subscriber's outgoing stream so it looks like one continuous RTP source whatever speaker it carries:
/// our SSRC, and sequence numbers and timestamps that continue across a switch from one source to another (as an
/// SFU's forwarder does, e.g. mediasoup's SeqManager and Janus's rtp switching context). Packets are changed in
/// place; nothing else of them is touched.
public struct RTPRewriter: Sendable {
    /// The SSRC the subscriber sees.
    public let outgoingSSRC: UInt32
    public let clockRate: UInt32
    /// Timestamp units of one packet when nothing better is known: 20 ms of Opus at 48 kHz.
    public let defaultTimestampStep: UInt32
    private var source: UInt32?
    private var sequenceDelta: UInt16 = 0
    private var timestampDelta: UInt32 = 0
    private var lastSequence: UInt16 = 0
    private var lastTimestamp: UInt32 = 0
    private var lastSentAt: UInt64 = 0
    private var started = false

    public init(outgoingSSRC: UInt32, clockRate: UInt32 = 48000, defaultTimestampStep: UInt32 = 960) {
        self.outgoingSSRC = outgoingSSRC
        self.clockRate = clockRate
        self.defaultTimestampStep = defaultTimestampStep
    }

    /// Rewrites `packet` (whose parsed header is `header`) for this subscriber at `now` (monotonic nanoseconds).
    /// On a new source, its first packet follows the last one sent: the next sequence number, and a timestamp
    /// advanced by the time that passed (at least one packet's worth).
    public mutating func rewrite(_ packet: inout [UInt8], header: RTPHeader, now: UInt64) {
        if header.ssrc != source {
            if started {
                let elapsed = now > lastSentAt ? now - lastSentAt : 0
                let ticks = UInt32(truncatingIfNeeded: elapsed / 1_000_000 * UInt64(clockRate) / 1000)  // whole ms: no overflow
                sequenceDelta = (lastSequence &+ 1) &- header.sequenceNumber
                timestampDelta = (lastTimestamp &+ max(ticks, defaultTimestampStep)) &- header.timestamp
            } else {
                sequenceDelta = 0
                timestampDelta = 0
            }
            source = header.ssrc
        }
        let sequence = header.sequenceNumber &+ sequenceDelta
        let timestamp = header.timestamp &+ timestampDelta
        packet.setUInt16(sequence, at: RTPHeader.sequenceOffset)
        packet.setUInt32(timestamp, at: RTPHeader.timestampOffset)
        packet.setUInt32(outgoingSSRC, at: RTPHeader.ssrcOffset)
        // Only newer packets move the reference: a late one keeps its place in the sequence.
        if !started || Int16(bitPattern: sequence &- lastSequence) > 0 {
            lastSequence = sequence
            lastTimestamp = timestamp
        }
        lastSentAt = now
        started = true
    }

    /// The source SSRC currently forwarded, if any.
    public var currentSource: UInt32? { source }
}

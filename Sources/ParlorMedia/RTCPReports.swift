/// A reception report block (RFC 3550 §6.4.1): what the reporter received of one source.
public struct ReportBlock: Sendable, Equatable {
    public var ssrc: UInt32
    /// Lost since the last report, as a fraction of 256.
    public var fractionLost: UInt8
    /// Lost since the start (24-bit signed: duplicates can make it negative).
    public var cumulativeLost: Int32
    public var extendedHighestSequence: UInt32
    public var jitter: UInt32
    /// The middle 32 bits of the last SR's NTP timestamp from this source, 0 if none.
    public var lastSenderReport: UInt32 = 0
    /// Since that SR, in 1/65536 s.
    public var delaySinceLastSenderReport: UInt32 = 0
}

// In an extension, so that the struct keeps its memberwise initialiser.
extension ReportBlock {
    init(parsing bytes: [UInt8], at offset: Int) {
        let lost = bytes.uint32(at: offset + 4) & 0x00FF_FFFF
        self.init(ssrc: bytes.uint32(at: offset), fractionLost: bytes[offset + 4],
                  cumulativeLost: Int32(bitPattern: lost << 8) >> 8,  // sign-extend 24 bits
                  extendedHighestSequence: bytes.uint32(at: offset + 8), jitter: bytes.uint32(at: offset + 12),
                  lastSenderReport: bytes.uint32(at: offset + 16), delaySinceLastSenderReport: bytes.uint32(at: offset + 20))
    }

    func append(to bytes: inout [UInt8]) {
        bytes.appendUInt32(ssrc)
        let lost = UInt32(bitPattern: max(-0x80_0000, min(0x7F_FFFF, cumulativeLost))) & 0x00FF_FFFF
        bytes.appendUInt32(UInt32(fractionLost) << 24 | lost)
        bytes.appendUInt32(extendedHighestSequence)
        bytes.appendUInt32(jitter)
        bytes.appendUInt32(lastSenderReport)
        bytes.appendUInt32(delaySinceLastSenderReport)
    }
}

/// A sender report (RFC 3550 §6.4.1).
public struct SenderReport: Sendable, Equatable {
    public var ssrc: UInt32
    public var ntpTimestamp: UInt64
    public var rtpTimestamp: UInt32
    public var packetCount: UInt32
    public var octetCount: UInt32
    public var blocks: [ReportBlock]

    /// The middle 32 bits of the NTP timestamp: what a receiver report's "last SR" echoes.
    public var compactNTP: UInt32 { UInt32(truncatingIfNeeded: ntpTimestamp >> 16) }
}

/// A receiver report (RFC 3550 §6.4.2), which the SFU reads from subscribers and sends to speakers.
public struct ReceiverReport: Sendable, Equatable {
    public var senderSSRC: UInt32
    public var blocks: [ReportBlock]

    public init(senderSSRC: UInt32, blocks: [ReportBlock]) {
        precondition(blocks.count < 32, "one RR carries at most 31 report blocks")
        self.senderSSRC = senderSSRC
        self.blocks = blocks
    }

    /// The packet on the wire (to be sent alone or as the first of a compound packet).
    public func serialized() -> [UInt8] {
        var bytes: [UInt8] = [0x80 | UInt8(blocks.count), RTCPPacket.receiverReportType]
        bytes.appendUInt16(UInt16(1 + 6 * blocks.count))  // length in words minus one
        bytes.appendUInt32(senderSSRC)
        for block in blocks { block.append(to: &bytes) }
        return bytes
    }
}

/// The benchmark's RTP payload: Opus-sized (160 bytes by default), carrying which speaker sent it, its sequence
/// (the speaker's tick) and its send time (CLOCK_MONOTONIC ns, the same clock in every process of the machine),
/// so a listener measures forwarding latency and loss from the payload alone. Its first byte is an Opus TOC (RFC 6716
/// §3.1: CELT fullband, 20 ms, mono, one frame), so a recording of the room (issue 38) keeps every packet on its
/// track and decodes it for the mix as one 20 ms frame: what a recorder costs is measured on packets it treats as
/// a browser's.
public struct ProbePayload: Sendable, Equatable {
    public static let magic: [UInt8] = [0xF8, 0x4D, 0x42, 0x31]  // TOC 0xF8, then "MB1"
    public static let headerLength = 18

    public var speaker: UInt16
    public var sequence: UInt32
    public var sentAt: UInt64

    public init(speaker: UInt16, sequence: UInt32, sentAt: UInt64) {
        self.speaker = speaker
        self.sequence = sequence
        self.sentAt = sentAt
    }

    /// `length` bytes (at least `headerLength`): the fields, then filler.
    public func encoded(length: Int = 160) -> [UInt8] {
        var bytes = Self.magic
        bytes.reserveCapacity(max(length, Self.headerLength))
        bytes += [UInt8(speaker >> 8), UInt8(speaker & 0xFF)]
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: sequence >> UInt32(shift))) }
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: sentAt >> UInt64(shift))) }
        while bytes.count < length { bytes.append(0xA5) }
        return bytes
    }

    /// Reads the fields from `bytes[range]` (an RTP packet's payload range); nil when it is not one of ours.
    public init?(_ bytes: [UInt8], in range: Range<Int>) {
        guard range.lowerBound >= 0, range.upperBound <= bytes.count, range.count >= Self.headerLength else { return nil }
        let base = range.lowerBound
        guard bytes[base] == Self.magic[0], bytes[base + 1] == Self.magic[1], bytes[base + 2] == Self.magic[2], bytes[base + 3] == Self.magic[3] else {
            return nil
        }
        speaker = UInt16(bytes[base + 4]) << 8 | UInt16(bytes[base + 5])
        var sequence: UInt32 = 0
        for index in 0..<4 { sequence = sequence << 8 | UInt32(bytes[base + 6 + index]) }
        var sentAt: UInt64 = 0
        for index in 0..<8 { sentAt = sentAt << 8 | UInt64(bytes[base + 10 + index]) }
        self.sequence = sequence
        self.sentAt = sentAt
    }
}

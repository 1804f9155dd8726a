/// The fields a recording needs from one whole, decrypted RTP packet (RFC 3550 §5.1): sequence number, timestamp,
/// SSRC and the Opus payload, found past the CSRC list and header extension and without the padding. A tiny parser of
/// its own: ParlorRecording does not depend on ParlorMedia.
public struct RTPOpusPacket: Sendable, Equatable {
    public var sequence: UInt16
    public var timestamp: UInt32
    public var ssrc: UInt32
    public var payload: [UInt8]

    public init(sequence: UInt16, timestamp: UInt32, ssrc: UInt32, payload: [UInt8]) {
        self.sequence = sequence
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.payload = payload
    }

    /// nil for anything that is not a version 2 RTP packet with a non-empty payload inside its bounds.
    public init?(parsing packet: [UInt8]) {
        guard packet.count >= 12, packet[0] >> 6 == 2 else { return nil }
        var start = 12 + 4 * Int(packet[0] & 0x0F)
        if packet[0] & 0x10 != 0 {
            guard packet.count >= start + 4 else { return nil }
            start += 4 + 4 * (Int(packet[start + 2]) << 8 | Int(packet[start + 3]))
        }
        var end = packet.count
        if packet[0] & 0x20 != 0 {
            let padding = Int(packet[end - 1])
            guard padding > 0 else { return nil }
            end -= padding
        }
        guard start < end else { return nil }
        sequence = UInt16(packet[2]) << 8 | UInt16(packet[3])
        timestamp = packet[4..<8].reduce(0) { $0 << 8 | UInt32($1) }
        ssrc = packet[8..<12].reduce(0) { $0 << 8 | UInt32($1) }
        payload = Array(packet[start..<end])
    }
}

/// The fixed header of an RTP packet (RFC 3550 §5.1), its CSRCs and header extension located, read without copying
/// the packet. Offsets index the datagram it was parsed from.
public struct RTPHeader: Sendable, Equatable {
    public var marker: Bool
    public var payloadType: UInt8
    public var sequenceNumber: UInt16
    public var timestamp: UInt32
    public var ssrc: UInt32
    public var csrcCount: Int
    /// The header extension's profile ("defined by profile", 0xBEDE for one-byte, 0x100x for two-byte) and where its
    /// data lies, if the X bit is set.
    public var extensionProfile: UInt16?
    public var extensionRange: Range<Int>?
    /// Where the payload lies: after the header, before any padding.
    public var payloadRange: Range<Int>

    /// Byte offsets of the fields `RTPRewriter` changes in place.
    public static let sequenceOffset = 2, timestampOffset = 4, ssrcOffset = 8

    public init(parsing packet: [UInt8]) throws(RTPError) {
        guard packet.count >= 12 else { throw .truncated }
        guard packet[0] >> 6 == 2 else { throw .badVersion }
        let hasPadding = packet[0] & 0x20 != 0
        let hasExtension = packet[0] & 0x10 != 0
        csrcCount = Int(packet[0] & 0x0F)
        marker = packet[1] & 0x80 != 0
        payloadType = packet[1] & 0x7F
        sequenceNumber = packet.uint16(at: 2)
        timestamp = packet.uint32(at: 4)
        ssrc = packet.uint32(at: 8)
        var offset = 12 + 4 * csrcCount
        guard offset <= packet.count else { throw .truncated }
        if hasExtension {
            guard offset + 4 <= packet.count else { throw .truncated }
            let words = Int(packet.uint16(at: offset + 2))
            let start = offset + 4, end = start + 4 * words
            guard end <= packet.count else { throw .truncated }
            extensionProfile = packet.uint16(at: offset)
            extensionRange = start..<end
            offset = end
        }
        var end = packet.count
        if hasPadding {
            let padding = Int(packet[packet.count - 1])
            guard padding > 0, padding <= end - offset else { throw .badPadding }
            end -= padding
        }
        payloadRange = offset..<end
    }

    /// The CSRC list's entries.
    public func csrcs(in packet: [UInt8]) -> [UInt32] { (0..<csrcCount).map { packet.uint32(at: 12 + 4 * $0) } }
}

/// Why bytes are not an RTP or RTCP packet Parlor reads.
public enum RTPError: Error, Sendable, Equatable {
    case truncated
    case badVersion
    case badPadding
    /// An RTCP packet's length field runs past the datagram or is not whole words.
    case badLength
}

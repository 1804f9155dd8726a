/// What a datagram on the media port carries, told by its first byte (RFC 7983 §7): the one port serves STUN, DTLS
/// and SRTP/SRTCP for every client.
public enum MediaPacketKind: Sendable, Equatable {
    case stun
    case dtls
    /// RTP or RTCP (with rtcp-mux both come here; `isRTCP` tells them apart).
    case rtp
    /// Anything else (ZRTP, TURN channels, garbage): dropped.
    case unknown

    public init(firstByte: UInt8) {
        switch firstByte {
        case 0...3: self = .stun
        case 20...63: self = .dtls
        case 128...191: self = .rtp
        default: self = .unknown
        }
    }

    public init(_ datagram: [UInt8]) {
        self = datagram.isEmpty ? .unknown : MediaPacketKind(firstByte: datagram[0])
    }

    /// With rtcp-mux, RTCP packet types 192–223 take the place of RTP's marker bit and payload type (RFC 5761 §4):
    /// true for those.
    public static func isRTCP(_ datagram: [UInt8]) -> Bool {
        datagram.count >= 2 && (192...223).contains(datagram[1])
    }
}

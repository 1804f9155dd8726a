/// The STUN attributes Parlor reads and writes (RFC 8489 §14, ICE's from RFC 8445 §16.1); any other is kept as
/// `.other` with its bytes.
public enum STUNAttribute: Sendable, Equatable {
    case mappedAddress(TransportAddress)
    case xorMappedAddress(TransportAddress)
    case username(String)
    /// The HMAC-SHA1 as read; computed when serializing (pass the key), whatever value is given here.
    case messageIntegrity([UInt8])
    /// The CRC-32 as read; computed when serializing, whatever value is given here.
    case fingerprint(UInt32)
    case errorCode(code: Int, reason: String)
    case unknownAttributes([UInt16])
    case software(String)
    case priority(UInt32)
    case useCandidate
    case iceControlled(tieBreaker: UInt64)
    case iceControlling(tieBreaker: UInt64)
    case other(type: UInt16, value: [UInt8])

    public enum Code {
        public static let mappedAddress: UInt16 = 0x0001
        public static let username: UInt16 = 0x0006
        public static let messageIntegrity: UInt16 = 0x0008
        public static let errorCode: UInt16 = 0x0009
        public static let unknownAttributes: UInt16 = 0x000A
        public static let xorMappedAddress: UInt16 = 0x0020
        public static let priority: UInt16 = 0x0024
        public static let useCandidate: UInt16 = 0x0025
        public static let software: UInt16 = 0x8022
        public static let fingerprint: UInt16 = 0x8028
        public static let iceControlled: UInt16 = 0x8029
        public static let iceControlling: UInt16 = 0x802A
    }

    public var typeCode: UInt16 {
        switch self {
        case .mappedAddress: return Code.mappedAddress
        case .xorMappedAddress: return Code.xorMappedAddress
        case .username: return Code.username
        case .messageIntegrity: return Code.messageIntegrity
        case .fingerprint: return Code.fingerprint
        case .errorCode: return Code.errorCode
        case .unknownAttributes: return Code.unknownAttributes
        case .software: return Code.software
        case .priority: return Code.priority
        case .useCandidate: return Code.useCandidate
        case .iceControlled: return Code.iceControlled
        case .iceControlling: return Code.iceControlling
        case .other(let type, _): return type
        }
    }
}

/// Why bytes are not a STUN message Parlor accepts.
public enum STUNError: Error, Sendable, Equatable {
    /// Fewer than 20 bytes, or fewer than the header's length says.
    case truncated
    /// The top bits, the magic cookie or the length's alignment say this is not STUN.
    case notSTUN
    /// The header's length disagrees with the datagram's.
    case lengthMismatch(header: Int, actual: Int)
    /// An attribute runs past the end of the message.
    case attributeOverrun(type: UInt16)
    /// An attribute's value has the wrong size or content.
    case malformedAttribute(type: UInt16)
    /// FINGERPRINT is not the last attribute.
    case fingerprintNotLast
}

/// A STUN message (RFC 8489) as a plain value: its type, transaction ID and attributes. Parsing and serializing are
/// in `STUNMessage+Parsing.swift` and `STUNMessage+Serializing.swift`; MESSAGE-INTEGRITY and FINGERPRINT are
/// computed when serializing and checked against the raw bytes after parsing.
public struct STUNMessage: Sendable, Equatable {
    public static let magicCookie: UInt32 = 0x2112_A442
    public static let headerLength = 20

    public var type: STUNMessageType
    /// 12 bytes.
    public var transactionID: [UInt8]
    public var attributes: [STUNAttribute]

    /// Where the MESSAGE-INTEGRITY attribute starts in the parsed bytes (nil if none or not parsed).
    public internal(set) var integrityOffset: Int?
    /// Where the FINGERPRINT attribute starts in the parsed bytes (nil if none or not parsed).
    public internal(set) var fingerprintOffset: Int?

    public init(type: STUNMessageType, transactionID: [UInt8], attributes: [STUNAttribute] = []) {
        precondition(transactionID.count == 12, "a STUN transaction ID has 12 bytes")
        self.type = type
        self.transactionID = transactionID
        self.attributes = attributes
    }

    public var username: String? {
        for case .username(let name) in attributes { return name }
        return nil
    }

    public var priority: UInt32? {
        for case .priority(let value) in attributes { return value }
        return nil
    }

    public var hasUseCandidate: Bool { attributes.contains(.useCandidate) }

    public var xorMappedAddress: TransportAddress? {
        for case .xorMappedAddress(let address) in attributes { return address }
        return nil
    }

    public var errorCode: Int? {
        for case .errorCode(let code, _) in attributes { return code }
        return nil
    }
}

/// A STUN message type: a method and a class (RFC 8489 §5), packed into 14 bits on the wire.
public struct STUNMessageType: Hashable, Sendable {
    public enum MessageClass: UInt16, Sendable {
        case request = 0b00, indication = 0b01, successResponse = 0b10, errorResponse = 0b11
    }

    public var method: UInt16
    public var messageClass: MessageClass

    public init(method: UInt16, messageClass: MessageClass) {
        self.method = method & 0xFFF
        self.messageClass = messageClass
    }

    public static let bindingMethod: UInt16 = 0x001
    public static let bindingRequest = STUNMessageType(method: bindingMethod, messageClass: .request)
    public static let bindingIndication = STUNMessageType(method: bindingMethod, messageClass: .indication)
    public static let bindingSuccess = STUNMessageType(method: bindingMethod, messageClass: .successResponse)
    public static let bindingError = STUNMessageType(method: bindingMethod, messageClass: .errorResponse)

    /// The 16-bit field: method bits M0–M11 with the class bits C0 (bit 4) and C1 (bit 8) between them.
    public var rawValue: UInt16 {
        let m = method
        let c = messageClass.rawValue
        return (m & 0x000F) | ((m & 0x0070) << 1) | ((m & 0x0F80) << 2) | ((c & 0b01) << 4) | ((c & 0b10) << 7)
    }

    /// Nil when one of the top two bits is set (then it is not STUN).
    public init?(rawValue: UInt16) {
        guard rawValue & 0xC000 == 0 else { return nil }
        let method = (rawValue & 0x000F) | ((rawValue & 0x00E0) >> 1) | ((rawValue & 0x3E00) >> 2)
        let classBits = ((rawValue & 0x0010) >> 4) | ((rawValue & 0x0100) >> 7)
        self.init(method: method, messageClass: MessageClass(rawValue: classBits)!)
    }
}

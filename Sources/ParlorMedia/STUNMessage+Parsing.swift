extension STUNMessage {
    /// Parses one datagram's STUN message (RFC 8489 §5, §14). Attributes after MESSAGE-INTEGRITY other than
    /// FINGERPRINT are ignored, as §14.5 says; FINGERPRINT must be last.
    public init(parsing bytes: [UInt8]) throws(STUNError) {
        guard bytes.count >= Self.headerLength else { throw .truncated }
        guard let type = STUNMessageType(rawValue: bytes.uint16(at: 0)), bytes.uint32(at: 4) == Self.magicCookie else { throw .notSTUN }
        let length = Int(bytes.uint16(at: 2))
        guard length % 4 == 0 else { throw .notSTUN }
        guard length + Self.headerLength == bytes.count else { throw .lengthMismatch(header: length, actual: bytes.count - Self.headerLength) }
        let transactionID = Array(bytes[8..<20])
        self.init(type: type, transactionID: transactionID)

        var offset = Self.headerLength
        while offset < bytes.count {
            guard bytes.count - offset >= 4 else { throw .attributeOverrun(type: 0) }
            let code = bytes.uint16(at: offset)
            let valueLength = Int(bytes.uint16(at: offset + 2))
            let valueStart = offset + 4
            guard valueLength <= bytes.count - valueStart else { throw .attributeOverrun(type: code) }
            let value = bytes[valueStart..<(valueStart + valueLength)]
            let next = valueStart + ((valueLength + 3) & ~3)
            if fingerprintOffset != nil { throw .fingerprintNotLast }
            if code == STUNAttribute.Code.fingerprint {
                guard valueLength == 4 else { throw .malformedAttribute(type: code) }
                fingerprintOffset = offset
                attributes.append(.fingerprint(bytes.uint32(at: valueStart)))
            } else if integrityOffset == nil {
                if code == STUNAttribute.Code.messageIntegrity {
                    guard valueLength == HMACSHA1.length else { throw .malformedAttribute(type: code) }
                    integrityOffset = offset
                    attributes.append(.messageIntegrity(Array(value)))
                } else {
                    attributes.append(try Self.attribute(code: code, value: value, transactionID: transactionID))
                }
            }
            offset = min(next, bytes.count)
        }
    }

    private static func attribute(code: UInt16, value: ArraySlice<UInt8>, transactionID: [UInt8]) throws(STUNError) -> STUNAttribute {
        let bytes = Array(value)
        typealias Code = STUNAttribute.Code
        switch code {
        case Code.mappedAddress:
            return .mappedAddress(try address(bytes, code: code, xorWith: nil))
        case Code.xorMappedAddress:
            return .xorMappedAddress(try address(bytes, code: code, xorWith: transactionID))
        case Code.username, Code.software:
            guard bytes.count <= 763, let text = String(validating: bytes, as: UTF8.self) else { throw .malformedAttribute(type: code) }
            return code == Code.username ? .username(text) : .software(text)
        case Code.errorCode:
            guard bytes.count >= 4, let reason = String(validating: bytes[4...], as: UTF8.self) else { throw .malformedAttribute(type: code) }
            let errorClass = Int(bytes[2] & 0x07), number = Int(bytes[3])
            guard (3...6).contains(errorClass), number < 100 else { throw .malformedAttribute(type: code) }
            return .errorCode(code: errorClass * 100 + number, reason: reason)
        case Code.unknownAttributes:
            guard bytes.count % 2 == 0 else { throw .malformedAttribute(type: code) }
            return .unknownAttributes(stride(from: 0, to: bytes.count, by: 2).map { bytes.uint16(at: $0) })
        case Code.priority:
            guard bytes.count == 4 else { throw .malformedAttribute(type: code) }
            return .priority(bytes.uint32(at: 0))
        case Code.useCandidate:
            guard bytes.isEmpty else { throw .malformedAttribute(type: code) }
            return .useCandidate
        case Code.iceControlled, Code.iceControlling:
            guard bytes.count == 8 else { throw .malformedAttribute(type: code) }
            let tieBreaker = bytes.uint64(at: 0)
            return code == Code.iceControlled ? .iceControlled(tieBreaker: tieBreaker) : .iceControlling(tieBreaker: tieBreaker)
        default:
            return .other(type: code, value: bytes)
        }
    }

    /// (XOR-)MAPPED-ADDRESS: a reserved byte, the family (1 IPv4, 2 IPv6), the port, the address (§14.1, §14.2).
    private static func address(_ bytes: [UInt8], code: UInt16, xorWith transactionID: [UInt8]?) throws(STUNError) -> TransportAddress {
        guard bytes.count >= 4 else { throw .malformedAttribute(type: code) }
        var mask: [UInt8] = []
        if let transactionID {
            mask.appendUInt32(magicCookie)
            mask += transactionID
        } else {
            mask = Array(repeating: 0, count: 16)
        }
        let port = bytes.uint16(at: 2) ^ mask.uint16(at: 0)
        switch bytes[1] {
        case 0x01 where bytes.count == 8:
            return TransportAddress(ip: .v4(bytes.uint32(at: 4) ^ mask.uint32(at: 0)), port: port)
        case 0x02 where bytes.count == 20:
            let address = (0..<16).map { bytes[4 + $0] ^ mask[$0] }
            return TransportAddress(ip: .v6(high: address.uint64(at: 0), low: address.uint64(at: 8)), port: port)
        default:
            throw .malformedAttribute(type: code)
        }
    }

    /// True if the message has a FINGERPRINT and it matches `bytes` (the datagram this message was parsed from).
    public func hasValidFingerprint(in bytes: [UInt8]) -> Bool {
        guard let offset = fingerprintOffset, offset + 8 == bytes.count else { return false }
        return CRC32.checksum(bytes[0..<offset]) ^ Self.fingerprintXOR == bytes.uint32(at: offset + 4)
    }

    /// True if the message has a MESSAGE-INTEGRITY and it is the HMAC-SHA1 of `bytes` (the datagram this message was
    /// parsed from) under `key`: for ICE's short-term credentials, the password's bytes.
    public func hasValidIntegrity(in bytes: [UInt8], key: [UInt8]) -> Bool {
        guard let offset = integrityOffset, offset + 24 <= bytes.count else { return false }
        // The HMAC covers the message up to the attribute, with a length that ends just after it (§14.5).
        var covered = Array(bytes[0..<offset])
        covered.setUInt16(UInt16(offset + 24 - Self.headerLength), at: 2)
        let code = HMACSHA1.authenticationCode(key: key, message: covered[...])
        return HMACSHA1.equal(bytes[(offset + 4)..<(offset + 24)], code)
    }

    static let fingerprintXOR: UInt32 = 0x5354_554E
}

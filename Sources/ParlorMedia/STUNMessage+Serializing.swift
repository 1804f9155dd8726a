extension STUNMessage {
    /// The message on the wire. With `integrityKey`, a MESSAGE-INTEGRITY over everything before it is appended; with
    /// `fingerprint`, a FINGERPRINT last. MESSAGE-INTEGRITY and FINGERPRINT in `attributes` are not written as given.
    public func serialized(integrityKey: [UInt8]? = nil, fingerprint: Bool = false) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128)
        bytes.appendUInt16(type.rawValue)
        bytes.appendUInt16(0)
        bytes.appendUInt32(Self.magicCookie)
        bytes += transactionID
        for attribute in attributes {
            switch attribute {
            case .messageIntegrity, .fingerprint: continue
            default: appendAttribute(attribute, to: &bytes)
            }
        }
        if let integrityKey {
            bytes.setUInt16(UInt16(bytes.count + 24 - Self.headerLength), at: 2)
            let code = HMACSHA1.authenticationCode(key: integrityKey, message: bytes[...])
            bytes.appendUInt16(STUNAttribute.Code.messageIntegrity)
            bytes.appendUInt16(UInt16(HMACSHA1.length))
            bytes += code
        }
        if fingerprint {
            bytes.setUInt16(UInt16(bytes.count + 8 - Self.headerLength), at: 2)
            let crc = CRC32.checksum(bytes[...]) ^ Self.fingerprintXOR
            bytes.appendUInt16(STUNAttribute.Code.fingerprint)
            bytes.appendUInt16(4)
            bytes.appendUInt32(crc)
        }
        bytes.setUInt16(UInt16(bytes.count - Self.headerLength), at: 2)
        return bytes
    }

    private func appendAttribute(_ attribute: STUNAttribute, to bytes: inout [UInt8]) {
        var value: [UInt8] = []
        switch attribute {
        case .mappedAddress(let address): value = Self.addressValue(address, xorWith: nil)
        case .xorMappedAddress(let address): value = Self.addressValue(address, xorWith: transactionID)
        case .username(let text), .software(let text): value = Array(text.utf8)
        case .errorCode(let code, let reason):
            value = [0, 0, UInt8((code / 100) & 0x07), UInt8(code % 100)] + Array(reason.utf8)
        case .unknownAttributes(let types): for type in types { value.appendUInt16(type) }
        case .priority(let priority): value.appendUInt32(priority)
        case .useCandidate: break
        case .iceControlled(let tieBreaker), .iceControlling(let tieBreaker): value.appendUInt64(tieBreaker)
        case .other(_, let raw): value = raw
        case .messageIntegrity, .fingerprint: return
        }
        bytes.appendUInt16(attribute.typeCode)
        bytes.appendUInt16(UInt16(value.count))
        bytes += value
        bytes += repeatElement(0, count: (4 - value.count % 4) % 4)
    }

    private static func addressValue(_ address: TransportAddress, xorWith transactionID: [UInt8]?) -> [UInt8] {
        var mask: [UInt8] = Array(repeating: 0, count: 16)
        if let transactionID {
            mask = []
            mask.appendUInt32(magicCookie)
            mask += transactionID
        }
        let addressBytes = address.addressBytes
        var value: [UInt8] = [0, address.isIPv6 ? 0x02 : 0x01]
        value.appendUInt16(address.port ^ mask.uint16(at: 0))
        for (index, byte) in addressBytes.enumerated() { value.append(byte ^ mask[index]) }
        return value
    }
}

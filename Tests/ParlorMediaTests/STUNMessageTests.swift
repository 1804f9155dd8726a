import Testing
@testable import ParlorMedia

/// `STUNMessage` against RFC 5769's test vectors, and what it refuses.
@Suite struct STUNMessageTests {
    @Test func parsesTheSampleRequestAndChecksItsIntegrityAndFingerprint() throws {
        let message = try STUNMessage(parsing: RFC5769.request)
        #expect(message.type == .bindingRequest)
        #expect(message.transactionID == RFC5769.transactionID)
        #expect(message.username == "evtj:h6vY")
        #expect(message.priority == 0x6E00_01FF)
        #expect(message.attributes.contains(.software("STUN test client")))
        #expect(message.attributes.contains(.iceControlled(tieBreaker: 0x932F_F9B1_5126_3B36)))
        #expect(message.hasValidIntegrity(in: RFC5769.request, key: RFC5769.password))
        #expect(message.hasValidFingerprint(in: RFC5769.request))
        #expect(!message.hasValidIntegrity(in: RFC5769.request, key: Array("wrong".utf8)))
    }

    @Test func parsesTheIPv4Response() throws {
        let message = try STUNMessage(parsing: RFC5769.ipv4Response)
        #expect(message.type == .bindingSuccess)
        #expect(message.xorMappedAddress == TransportAddress(host: "192.0.2.1", port: 32853))
        #expect(message.attributes.contains(.software("test vector")))
        #expect(message.hasValidIntegrity(in: RFC5769.ipv4Response, key: RFC5769.password))
        #expect(message.hasValidFingerprint(in: RFC5769.ipv4Response))
    }

    @Test func parsesTheIPv6Response() throws {
        let message = try STUNMessage(parsing: RFC5769.ipv6Response)
        #expect(message.type == .bindingSuccess)
        #expect(message.xorMappedAddress == TransportAddress(host: "2001:db8:1234:5678:11:2233:4455:6677", port: 32853))
        #expect(message.hasValidIntegrity(in: RFC5769.ipv6Response, key: RFC5769.password))
        #expect(message.hasValidFingerprint(in: RFC5769.ipv6Response))
    }

    /// The vectors pad with spaces and we pad with zeros, so our bytes differ there; everything else must match.
    @Test func serializesTheIPv4ResponseLikeTheVectorUpToPadding() throws {
        let response = STUNMessage(type: .bindingSuccess, transactionID: RFC5769.transactionID, attributes: [
            .software("test vector"), .xorMappedAddress(TransportAddress(host: "192.0.2.1", port: 32853)!),
        ])
        let bytes = response.serialized(integrityKey: RFC5769.password, fingerprint: true)
        var expected = RFC5769.ipv4Response
        expected[20 + 4 + 11] = 0  // the vector's padding byte
        #expect(Array(bytes[0..<44]) == Array(expected[0..<44]))
        let parsed = try STUNMessage(parsing: bytes)
        #expect(parsed.hasValidIntegrity(in: bytes, key: RFC5769.password))
        #expect(parsed.hasValidFingerprint(in: bytes))
        #expect(parsed.xorMappedAddress == response.xorMappedAddress)
    }

    @Test func everyAttributeRoundTrips() throws {
        let attributes: [STUNAttribute] = [
            .mappedAddress(TransportAddress(host: "10.1.2.3", port: 9)!),
            .xorMappedAddress(TransportAddress(host: "::1", port: 65535)!),
            .username("abc:defg"), .software("parlor"), .errorCode(code: 487, reason: "Role Conflict"),
            .unknownAttributes([0x0003, 0x0004]), .priority(1_853_824_767), .useCandidate,
            .iceControlling(tieBreaker: 42), .iceControlled(tieBreaker: .max), .other(type: 0xC057, value: [1, 2, 3]),
        ]
        let message = STUNMessage(type: .bindingError, transactionID: Array(1...12), attributes: attributes)
        let bytes = message.serialized(integrityKey: [9, 9], fingerprint: true)
        let parsed = try STUNMessage(parsing: bytes)
        #expect(Array(parsed.attributes.dropLast(2)) == attributes)
        #expect(parsed.hasValidIntegrity(in: bytes, key: [9, 9]))
        #expect(parsed.hasValidFingerprint(in: bytes))
        #expect(parsed.errorCode == 487)
    }

    @Test func messageTypesEncodeMethodAndClassBits() {
        #expect(STUNMessageType.bindingRequest.rawValue == 0x0001)
        #expect(STUNMessageType.bindingIndication.rawValue == 0x0011)
        #expect(STUNMessageType.bindingSuccess.rawValue == 0x0101)
        #expect(STUNMessageType.bindingError.rawValue == 0x0111)
        for raw in UInt16(0)..<0x4000 { #expect(STUNMessageType(rawValue: raw)!.rawValue == raw) }
    }

    @Test func aFlippedBitFailsIntegrityAndFingerprint() throws {
        var bytes = RFC5769.request
        bytes[30] ^= 0x01  // inside SOFTWARE
        let message = try STUNMessage(parsing: bytes)
        #expect(!message.hasValidIntegrity(in: bytes, key: RFC5769.password))
        #expect(!message.hasValidFingerprint(in: bytes))
    }

    @Test func refusesWhatIsNotSTUN() {
        #expect(throws: STUNError.truncated) { try STUNMessage(parsing: Array(RFC5769.request.prefix(19))) }
        var cookie = RFC5769.request
        cookie[4] = 0
        #expect(throws: STUNError.notSTUN) { try STUNMessage(parsing: cookie) }
        var rtp = RFC5769.request
        rtp[0] = 0x80
        #expect(throws: STUNError.notSTUN) { try STUNMessage(parsing: rtp) }
        #expect(throws: STUNError.lengthMismatch(header: 0x58, actual: 0x54)) { try STUNMessage(parsing: Array(RFC5769.request.dropLast(4))) }
        var overrun = RFC5769.request
        overrun[23] = 0xFF  // SOFTWARE claims 255 bytes
        #expect(throws: STUNError.attributeOverrun(type: 0x8022)) { try STUNMessage(parsing: overrun) }
        var badPriority = RFC5769.request
        badPriority[43] = 5
        #expect(throws: (any Error).self) { try STUNMessage(parsing: badPriority) }
    }

    @Test func fingerprintMustBeLast() {
        var bytes = RFC5769.request
        bytes += [0x80, 0x22, 0x00, 0x00]  // SOFTWARE after FINGERPRINT
        bytes.setUInt16(UInt16(bytes.count - 20), at: 2)
        #expect(throws: STUNError.fingerprintNotLast) { try STUNMessage(parsing: bytes) }
    }
}

import Testing
@testable import ParlorMedia

/// `SRTPSession`: libsrtp2 through our wrapper, both profiles.
@Suite struct SRTPSessionTests {
    static func rtpPacket(sequence: UInt16, payload: [UInt8] = Array(repeating: 0xAB, count: 60)) -> [UInt8] {
        [0x80, 111, UInt8(sequence >> 8), UInt8(sequence & 0xFF), 0, 0, 0x03, 0xC0, 0x12, 0x34, 0x56, 0x78] + payload
    }

    static func key(for profile: SRTPProfile, seed: UInt8) -> [UInt8] {
        (0..<(profile.keyLength + profile.saltLength)).map { UInt8(truncatingIfNeeded: Int(seed) &+ $0 &* 7) }
    }

    @Test(arguments: SRTPProfile.allCases)
    func protectThenUnprotectGivesThePacketBack(profile: SRTPProfile) throws {
        let key = Self.key(for: profile, seed: 3)
        let sender = try SRTPSession(profile: profile, direction: .outbound, key: key)
        let receiver = try SRTPSession(profile: profile, direction: .inbound, key: key)
        for sequence in UInt16(1)...5 {
            let plain = Self.rtpPacket(sequence: sequence)
            var packet = plain
            try sender.protectRTP(&packet)
            #expect(packet.count > plain.count)
            #expect(packet[12...] != plain[12...][...])  // the payload is encrypted
            try receiver.unprotectRTP(&packet)
            #expect(packet == plain)
        }
    }

    @Test(arguments: SRTPProfile.allCases)
    func rtcpRoundTrips(profile: SRTPProfile) throws {
        let key = Self.key(for: profile, seed: 9)
        let sender = try SRTPSession(profile: profile, direction: .outbound, key: key)
        let receiver = try SRTPSession(profile: profile, direction: .inbound, key: key)
        let report: [UInt8] = [0x80, 201, 0, 1, 0x12, 0x34, 0x56, 0x78]  // an empty receiver report
        var packet = report
        try sender.protectRTCP(&packet)
        #expect(packet.count > report.count)
        try receiver.unprotectRTCP(&packet)
        #expect(packet == report)
    }

    @Test(arguments: SRTPProfile.allCases)
    func aTamperedPacketIsRejected(profile: SRTPProfile) throws {
        let key = Self.key(for: profile, seed: 5)
        let sender = try SRTPSession(profile: profile, direction: .outbound, key: key)
        let receiver = try SRTPSession(profile: profile, direction: .inbound, key: key)
        var packet = Self.rtpPacket(sequence: 7)
        try sender.protectRTP(&packet)
        packet[20] ^= 0x01
        #expect(throws: SRTPError.authenticationFailed) { try receiver.unprotectRTP(&packet) }
    }

    @Test func aPacketProtectedWithOtherKeysIsRejected() throws {
        let profile = SRTPProfile.aes128CMHMACSHA1_80
        let sender = try SRTPSession(profile: profile, direction: .outbound, key: Self.key(for: profile, seed: 1))
        let receiver = try SRTPSession(profile: profile, direction: .inbound, key: Self.key(for: profile, seed: 2))
        var packet = Self.rtpPacket(sequence: 1)
        try sender.protectRTP(&packet)
        #expect(throws: SRTPError.authenticationFailed) { try receiver.unprotectRTP(&packet) }
    }

    @Test(arguments: SRTPProfile.allCases)
    func aReplayedPacketIsRejected(profile: SRTPProfile) throws {
        let key = Self.key(for: profile, seed: 11)
        let sender = try SRTPSession(profile: profile, direction: .outbound, key: key)
        let receiver = try SRTPSession(profile: profile, direction: .inbound, key: key)
        var packet = Self.rtpPacket(sequence: 42)
        try sender.protectRTP(&packet)
        var first = packet
        try receiver.unprotectRTP(&first)
        var again = packet
        #expect(throws: SRTPError.replayed) { try receiver.unprotectRTP(&again) }
    }

    @Test func keyingMaterialOfTheWrongLengthIsRefused() {
        #expect(throws: SRTPError.wrongKeyLength(expected: 30, got: 16)) {
            _ = try SRTPSession(profile: .aes128CMHMACSHA1_80, direction: .outbound, key: Array(repeating: 1, count: 16))
        }
    }

    @Test func aRuntPacketIsMalformedNotACrash() throws {
        let receiver = try SRTPSession(profile: .aeadAES128GCM, direction: .inbound, key: Self.key(for: .aeadAES128GCM, seed: 0))
        var packet: [UInt8] = [0x80, 0]
        #expect(throws: SRTPError.malformed) { try receiver.unprotectRTP(&packet) }
    }
}

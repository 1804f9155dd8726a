import ParlorSRTP
import Testing
@testable import ParlorMedia

/// The SRTP contexts the media server and client use (ParlorSRTP's `SRTPSender` and `SRTPReceiver`), both profiles,
/// as they were tested when ParlorMedia wrapped libsrtp2; and the profile names and numbers DTLS-SRTP needs.
@Suite struct SRTPContextTests {
    static func rtpPacket(sequence: UInt16, payload: [UInt8] = Array(repeating: 0xAB, count: 60)) -> [UInt8] {
        [0x80, 111, UInt8(sequence >> 8), UInt8(sequence & 0xFF), 0, 0, 0x03, 0xC0, 0x12, 0x34, 0x56, 0x78] + payload
    }

    static func key(for profile: SRTPProtectionProfile, seed: UInt8) -> [UInt8] {
        (0..<profile.keyingMaterialLength).map { UInt8(truncatingIfNeeded: Int(seed) &+ $0 &* 7) }
    }

    @Test(arguments: SRTPProtectionProfile.allCases)
    func protectThenUnprotectGivesThePacketBack(profile: SRTPProtectionProfile) throws {
        let key = Self.key(for: profile, seed: 3)
        let sender = try SRTPSender(profile: profile, keyingMaterial: key)
        let receiver = try SRTPReceiver(profile: profile, keyingMaterial: key)
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

    @Test(arguments: SRTPProtectionProfile.allCases)
    func rtcpRoundTrips(profile: SRTPProtectionProfile) throws {
        let key = Self.key(for: profile, seed: 9)
        let sender = try SRTPSender(profile: profile, keyingMaterial: key)
        let receiver = try SRTPReceiver(profile: profile, keyingMaterial: key)
        let report: [UInt8] = [0x80, 201, 0, 1, 0x12, 0x34, 0x56, 0x78]  // an empty receiver report
        var packet = report
        try sender.protectRTCP(&packet)
        #expect(packet.count > report.count)
        try receiver.unprotectRTCP(&packet)
        #expect(packet == report)
    }

    @Test(arguments: SRTPProtectionProfile.allCases)
    func aTamperedPacketIsRejected(profile: SRTPProtectionProfile) throws {
        let key = Self.key(for: profile, seed: 5)
        let sender = try SRTPSender(profile: profile, keyingMaterial: key)
        let receiver = try SRTPReceiver(profile: profile, keyingMaterial: key)
        var packet = Self.rtpPacket(sequence: 7)
        try sender.protectRTP(&packet)
        packet[20] ^= 0x01
        #expect(throws: SRTPError.authenticationFailed) { try receiver.unprotectRTP(&packet) }
    }

    @Test func aPacketProtectedWithOtherKeysIsRejected() throws {
        let profile = SRTPProtectionProfile.aes128CMHMACSHA1_80
        let sender = try SRTPSender(profile: profile, keyingMaterial: Self.key(for: profile, seed: 1))
        let receiver = try SRTPReceiver(profile: profile, keyingMaterial: Self.key(for: profile, seed: 2))
        var packet = Self.rtpPacket(sequence: 1)
        try sender.protectRTP(&packet)
        #expect(throws: SRTPError.authenticationFailed) { try receiver.unprotectRTP(&packet) }
    }

    @Test(arguments: SRTPProtectionProfile.allCases)
    func aReplayedPacketIsRejected(profile: SRTPProtectionProfile) throws {
        let key = Self.key(for: profile, seed: 11)
        let sender = try SRTPSender(profile: profile, keyingMaterial: key)
        let receiver = try SRTPReceiver(profile: profile, keyingMaterial: key)
        var packet = Self.rtpPacket(sequence: 42)
        try sender.protectRTP(&packet)
        var first = packet
        try receiver.unprotectRTP(&first)
        var again = packet
        #expect(throws: SRTPError.replayed(index: 42)) { try receiver.unprotectRTP(&again) }
    }

    @Test func keyingMaterialOfTheWrongLengthIsRefused() {
        #expect(throws: SRTPError.wrongKeyingMaterialLength(expected: 30, got: 16)) {
            _ = try SRTPSender(profile: .aes128CMHMACSHA1_80, keyingMaterial: Array(repeating: 1, count: 16))
        }
    }

    @Test func aRuntPacketIsMalformedNotACrash() throws {
        let receiver = try SRTPReceiver(profile: .aeadAES128GCM, keyingMaterial: Self.key(for: .aeadAES128GCM, seed: 0))
        var packet: [UInt8] = [0x80, 0]
        #expect(throws: SRTPError.tooShort(length: 2)) { try receiver.unprotectRTP(&packet) }
    }

    @Test func profilesAreFoundByTheirDTLSNumberAndTheirName() {
        #expect(SRTPProtectionProfile(protectionProfileID: 0x0001) == .aes128CMHMACSHA1_80)
        #expect(SRTPProtectionProfile(protectionProfileID: 0x0007) == .aeadAES128GCM)
        #expect(SRTPProtectionProfile(protectionProfileID: 0x0008) == nil)  // AEAD_AES_256_GCM: not ours
        #expect(SRTPProtectionProfile(name: "AEAD_AES_128_GCM") == .aeadAES128GCM)
        #expect(SRTPProtectionProfile(name: "AES_CM_128_HMAC_SHA1_80") == .aes128CMHMACSHA1_80)
        #expect(SRTPProtectionProfile(name: "SRTP_AES128_CM_SHA1_80") == nil)  // OpenSSL's spelling is not taken
        #expect(SRTPProtectionProfile.preferenceOrder.first == .aeadAES128GCM)
        #expect(SRTPProtectionProfile.largestOverhead == 20)  // GCM's SRTCP: 16-byte tag and 4-byte index
    }
}

import Testing
@testable import ParlorSRTP

/// Known answers from the RFCs, hex copied from them. Each test fails if a byte of its expected value changes.
@Suite struct SRTPVectorTests {
    /// RFC 3711 Appendix B.2 (AES-CM): session key 2B7E1516…, session salt F0F1…FCFD, SSRC 0, ROC 0, sequence 0,
    /// so the counter starts at F0F1F2F3F4F5F6F7F8F9FAFBFCFD0000. A payload of zeros encrypts to the keystream;
    /// the RFC's segment is 65282 blocks and it lists the first three and the last three.
    @Test func rfc3711AppendixB2CounterModeKeystream() throws {
        let keys = SRTPSessionKeys(rtpEncryptionKey: hexBytes("2B7E151628AED2A6ABF7158809CF4F3C"),
                                   rtpAuthenticationKey: [UInt8](repeating: 0, count: 20),
                                   rtpSalt: hexBytes("F0F1F2F3F4F5F6F7F8F9FAFBFCFD"),
                                   rtcpEncryptionKey: [UInt8](repeating: 0, count: 16),
                                   rtcpAuthenticationKey: [UInt8](repeating: 0, count: 20),
                                   rtcpSalt: [UInt8](repeating: 0, count: 14))
        let sender = try SRTPSender(profile: .aes128CMHMACSHA1_80, sessionKeys: keys)
        let blocks = 65282
        var packet = TestPackets.rtp(sequence: 0, ssrc: 0, payload: [UInt8](repeating: 0, count: blocks * 16))
        packet.reserveCapacity(packet.count + 10)
        try sender.protectRTP(&packet)
        func keystreamBlock(_ block: Int) -> [UInt8] { Array(packet[(12 + 16 * block)..<(12 + 16 * block + 16)]) }
        #expect(keystreamBlock(0) == hexBytes("E03EAD0935C95E80E166B16DD92B4EB4"))
        #expect(keystreamBlock(1) == hexBytes("D23513162B02D0F72A43A2FE4A5F97AB"))
        #expect(keystreamBlock(2) == hexBytes("41E95B3BB0A2E8DD477901E4FCA894C0"))
        #expect(keystreamBlock(0xFEFF) == hexBytes("EC8CDF7398607CB0F2D21675EA9EA1E4"))
        #expect(keystreamBlock(0xFF00) == hexBytes("362B7C3C6773516318A077D7FC5073AE"))
        #expect(keystreamBlock(0xFF01) == hexBytes("6A2CC3787889374FBEB4C81B17BA6C44"))
    }

    /// RFC 3711 Appendix B.3 (key derivation): the PRF with labels 0 (cipher key), 2 (cipher salt) and 1 (the
    /// RFC lists 94 bytes of authentication key: several PRF blocks).
    @Test func rfc3711AppendixB3KeyDerivation() throws {
        let masterKey = hexBytes("E1F97A0D3E018BE0D64FA32C06DE4139")
        let masterSalt = hexBytes("0EC675AD498AFEEBB6960B3AABE6")
        #expect(try SRTPKeyDerivation.pseudoRandom(masterKey: masterKey, masterSalt: masterSalt, label: .rtpEncryption, length: 16)
            == hexBytes("C61E7A93744F39EE10734AFE3FF7A087"))
        #expect(try SRTPKeyDerivation.pseudoRandom(masterKey: masterKey, masterSalt: masterSalt, label: .rtpSalt, length: 14)
            == hexBytes("30CBBC08863D8C85D49DB34A9AE1"))
        #expect(try SRTPKeyDerivation.pseudoRandom(masterKey: masterKey, masterSalt: masterSalt, label: .rtpAuthentication, length: 94)
            == hexBytes("""
                CEBE321F6FF7716B6FD4AB49AF256A156D38BAA48F0A0ACF3C34E2359E6CDBCE
                E049646C43D9327AD175578EF72270986371C10C9A369AC2F94A8C5FBCDDDC25
                6D6E919A48B610EF17C2041E474035766B68642C59BBFC2F34DB60DBDFB2
                """))
        // The same through the session key set the profile uses (20 bytes of HMAC-SHA1 key).
        let keys = try SRTPKeyDerivation.sessionKeys(profile: .aes128CMHMACSHA1_80, keyingMaterial: masterKey + masterSalt)
        #expect(keys.rtpEncryptionKey == hexBytes("C61E7A93744F39EE10734AFE3FF7A087"))
        #expect(keys.rtpSalt == hexBytes("30CBBC08863D8C85D49DB34A9AE1"))
        #expect(keys.rtpAuthenticationKey == hexBytes("CEBE321F6FF7716B6FD4AB49AF256A156D38BAA4"))
    }

    /// RFC 7714 §16 and §17 give session keys, not master keys: key 000102…0F, salt "Quid pro quo".
    static let gcmSessionKeys = SRTPSessionKeys(rtpEncryptionKey: hexBytes("000102030405060708090a0b0c0d0e0f"), rtpAuthenticationKey: [],
                                                rtpSalt: hexBytes("517569642070726f2071756f"),
                                                rtcpEncryptionKey: hexBytes("000102030405060708090a0b0c0d0e0f"), rtcpAuthenticationKey: [],
                                                rtcpSalt: hexBytes("517569642070726f2071756f"))

    static let rfc7714RTPPacket = hexBytes("""
        8040f17b 8041f8d3 5501a0b2 47616c6c 69612065 7374206f 6d6e6973
        20646976 69736120 696e2070 61727465 73207472 6573
        """)

    static let rfc7714SRTPPacket = hexBytes("""
        8040f17b 8041f8d3 5501a0b2 f24de3a3 fb34de6c acba861c 9d7e4bca
        be633bd5 0d294e6f 42a5f47a 51c7d19b 36de3adf 8833899d 7f27beb1
        6a9152cf 765ee439 0cce
        """)

    /// RFC 7714 §16: AEAD_AES_128_GCM SRTP, SSRC 0x5501a0b2, ROC 0, sequence 0xf17b (IV 51753c6580c2726f20718414).
    @Test func rfc7714Section16GCMRTP() throws {
        let sender = try SRTPSender(profile: .aeadAES128GCM, sessionKeys: Self.gcmSessionKeys)
        var packet = Self.rfc7714RTPPacket
        try sender.protectRTP(&packet)
        #expect(packet == Self.rfc7714SRTPPacket)

        let receiver = try SRTPReceiver(profile: .aeadAES128GCM, sessionKeys: Self.gcmSessionKeys)
        var received = Self.rfc7714SRTPPacket
        try receiver.unprotectRTP(&received)
        #expect(received == Self.rfc7714RTPPacket)
    }

    static let rfc7714RTCPPacket = hexBytes("""
        81c8000d 4d617273 4e545031 4e545032 52545020 0000042a 0000e930
        4c756e61 deadbeef deadbeef deadbeef deadbeef deadbeef
        """)

    static let rfc7714SRTCPPacket = hexBytes("""
        81c8000d 4d617273 63e94885 dcdab67c a727d766 2f6b7e99 7ff5c0f7
        6c06f32d c676a5f1 730d6fda 4ce09b46 86303ded 0bb9275b c84aa458
        96cf4d2f c5abf872 45d9eade 800005d4
        """)

    /// RFC 7714 §17: AEAD_AES_128_GCM SRTCP, SSRC "Mars", E=1, SRTCP index 0x5d4 (IV 517524055203726f207170bb);
    /// the tag, then E||index, end the packet.
    @Test func rfc7714Section17GCMRTCP() throws {
        let sender = try SRTPSender(profile: .aeadAES128GCM, sessionKeys: Self.gcmSessionKeys)
        try sender.setNextRTCPIndex(0x5d4, ssrc: 0x4d61_7273)
        var packet = Self.rfc7714RTCPPacket
        try sender.protectRTCP(&packet)
        #expect(packet == Self.rfc7714SRTCPPacket)
        #expect(sender.nextRTCPIndex(ssrc: 0x4d61_7273) == 0x5d5)

        let receiver = try SRTPReceiver(profile: .aeadAES128GCM, sessionKeys: Self.gcmSessionKeys)
        var received = Self.rfc7714SRTCPPacket
        try receiver.unprotectRTCP(&received)
        #expect(received == Self.rfc7714RTCPPacket)
    }
}

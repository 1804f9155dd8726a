import Testing
@testable import ParlorSRTP

/// Round trips, the rollover, reordering, replays, tampering and wrong keys, for both profiles.
@Suite struct SRTPBehaviourTests {
    static let ssrc: UInt32 = 0xCAFE_BABE

    static func pair(_ profile: SRTPProtectionProfile, seed: UInt8 = 1) throws -> (SRTPSender, SRTPReceiver) {
        let key = TestPackets.keyingMaterial(profile, seed: seed)
        return (try SRTPSender(profile: profile, keyingMaterial: key), try SRTPReceiver(profile: profile, keyingMaterial: key))
    }

    static func payload(_ sequence: UInt16, count: Int = 160) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: Int(sequence) &* 13 &+ $0) }
    }

    static func protect(_ sender: SRTPSender, sequence: UInt16, ssrc: UInt32 = ssrc) throws -> [UInt8] {
        var packet = TestPackets.rtp(sequence: sequence, ssrc: ssrc, payload: payload(sequence))
        try sender.protectRTP(&packet)
        return packet
    }

    static func unprotect(_ receiver: SRTPReceiver, _ packet: [UInt8]) -> Result<[UInt8], SRTPError> {
        var bytes = packet
        return Result { () throws(SRTPError) in
            try receiver.unprotectRTP(&bytes)
            return bytes
        }
    }

    @Test(arguments: SRTPProtectionProfile.allCases)
    func roundTripsWithCSRCsExtensionsAndEverySize(profile: SRTPProtectionProfile) throws {
        let (sender, receiver) = try Self.pair(profile)
        var generator = SeededGenerator(seed: 7)
        for sequence in UInt16(1)...300 {
            let payload = (0..<Int.random(in: 0...1200, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let plain = TestPackets.rtp(sequence: sequence, ssrc: Self.ssrc, payload: payload,
                                        csrcCount: Int(sequence % 3), extensionWords: Int(sequence % 4))
            var packet = plain
            try sender.protectRTP(&packet)
            #expect(packet.count == plain.count + profile.rtpOverhead)
            #expect(packet[0..<(plain.count - payload.count)] == plain[0..<(plain.count - payload.count)], "header stays clear")
            if payload.count >= 8 { #expect(packet[(plain.count - payload.count)..<plain.count] != plain[(plain.count - payload.count)...]) }
            try receiver.unprotectRTP(&packet)
            #expect(packet == plain)
        }
    }

    @Test(arguments: SRTPProtectionProfile.allCases)
    func rolloverIncrementsTheCounterAndALatePacketFromBeforeStillDecrypts(profile: SRTPProtectionProfile) throws {
        let (sender, receiver) = try Self.pair(profile)
        let sequences: [UInt16] = Array(65500...65535) + Array(0...40)
        var protected: [UInt16: [UInt8]] = [:]
        for sequence in sequences { protected[sequence] = try Self.protect(sender, sequence: sequence) }
        #expect(sender.rolloverCounter(ssrc: Self.ssrc) == 1)
        // 65534 and 65535 arrive late, after the receiver has rolled over.
        for sequence in sequences where sequence != 65534 && sequence != 65535 {
            #expect(try Self.unprotect(receiver, protected[sequence]!).get() == TestPackets.rtp(sequence: sequence, ssrc: Self.ssrc, payload: Self.payload(sequence)))
        }
        #expect(receiver.rolloverCounter(ssrc: Self.ssrc) == 1)
        for sequence: UInt16 in [65535, 65534] {
            #expect(try Self.unprotect(receiver, protected[sequence]!).get() == TestPackets.rtp(sequence: sequence, ssrc: Self.ssrc, payload: Self.payload(sequence)))
        }
        #expect(receiver.rolloverCounter(ssrc: Self.ssrc) == 1, "a late packet does not move the counter back")
        #expect(Self.unprotect(receiver, protected[65535]!) == .failure(.replayed(index: 65535)))
        #expect(Self.unprotect(receiver, protected[3]!) == .failure(.replayed(index: 65536 + 3)))
    }

    @Test(arguments: SRTPProtectionProfile.allCases)
    func reorderingWithinTheWindowIsAcceptedAndReplaysAndOlderPacketsAreRefused(profile: SRTPProtectionProfile) throws {
        let (sender, receiver) = try Self.pair(profile)
        let packets = try (UInt16(1000)...1300).map { try Self.protect(sender, sequence: $0) }
        // Deliver in blocks of 100, each shuffled: reordering of up to 99 packets, inside the 128 window.
        var generator = SeededGenerator(seed: 11)
        for start in stride(from: 0, to: 300, by: 100) {
            for offset in (0..<100).shuffled(using: &generator) {
                #expect(throws: Never.self) { try Self.unprotect(receiver, packets[start + offset]).get() }
            }
        }
        #expect(Self.unprotect(receiver, packets[250]) == .failure(.replayed(index: 1250)))
        // Once 1300 is in, the window holds 1173…1300: 1173 is a replay, 1172 is too old.
        #expect(throws: Never.self) { try Self.unprotect(receiver, packets[300]).get() }
        #expect(Self.unprotect(receiver, packets[173]) == .failure(.replayed(index: 1173)))
        #expect(Self.unprotect(receiver, packets[172]) == .failure(.tooOld(index: 1172)))
    }

    @Test(arguments: SRTPProtectionProfile.allCases)
    func aPacketOlderThanTheWindowIsRefusedEvenIfNeverSeen(profile: SRTPProtectionProfile) throws {
        let (sender, receiver) = try Self.pair(profile)
        let withheld = try Self.protect(sender, sequence: 10)
        for sequence in UInt16(11)...200 { _ = try Self.unprotect(receiver, try Self.protect(sender, sequence: sequence)).get() }
        #expect(Self.unprotect(receiver, withheld) == .failure(.tooOld(index: 10)))
    }

    @Test(arguments: SRTPProtectionProfile.allCases)
    func aTamperedByteAnywhereIsRefusedAndChangesNothing(profile: SRTPProtectionProfile) throws {
        let (sender, receiver) = try Self.pair(profile)
        let plain = TestPackets.rtp(sequence: 77, ssrc: Self.ssrc, payload: Self.payload(77, count: 40), csrcCount: 1, extensionWords: 1)
        var packet = plain
        try sender.protectRTP(&packet)
        for position in packet.indices {
            for flip: UInt8 in [0x01, 0x80] {
                var tampered = packet
                tampered[position] ^= flip
                #expect(throws: SRTPError.self, "byte \(position) ^ \(flip)") { try Self.unprotect(receiver, tampered).get() }
            }
        }
        #expect(receiver.rolloverCounter(ssrc: Self.ssrc) == 0)
        #expect(try Self.unprotect(receiver, packet).get() == plain, "the untouched packet still passes")
    }

    @Test(arguments: SRTPProtectionProfile.allCases)
    func otherKeysAreRefused(profile: SRTPProtectionProfile) throws {
        let (sender, _) = try Self.pair(profile, seed: 1)
        let (_, stranger) = try Self.pair(profile, seed: 2)
        #expect(Self.unprotect(stranger, try Self.protect(sender, sequence: 5)) == .failure(.authenticationFailed))
        #expect(throws: SRTPError.wrongKeyingMaterialLength(expected: profile.keyingMaterialLength, got: 29)) {
            _ = try SRTPSender(profile: profile, keyingMaterial: [UInt8](repeating: 1, count: 29))
        }
    }

    @Test(arguments: SRTPProtectionProfile.allCases)
    func theSenderRefusesToProtectAnIndexTwice(profile: SRTPProtectionProfile) throws {
        let (sender, _) = try Self.pair(profile)
        _ = try Self.protect(sender, sequence: 9)
        var again = TestPackets.rtp(sequence: 9, ssrc: Self.ssrc, payload: Self.payload(9))
        let before = again
        #expect(throws: SRTPError.replayed(index: 9)) { try sender.protectRTP(&again) }
        #expect(again == before, "a refused packet is left as it was")
    }

    @Test(arguments: SRTPProtectionProfile.allCases)
    func malformedPacketsAreRefusedWithTheirReason(profile: SRTPProtectionProfile) throws {
        let (sender, receiver) = try Self.pair(profile)
        var short: [UInt8] = [0x80, 0, 0, 1]
        #expect(throws: SRTPError.tooShort(length: 4)) { try sender.protectRTP(&short) }
        var version1 = TestPackets.rtp(sequence: 1, ssrc: 1, payload: [1, 2, 3])
        version1[0] = 0x40
        #expect(throws: SRTPError.badVersion(1)) { try sender.protectRTP(&version1) }
        var tooShortForTag = [UInt8](repeating: 0x80, count: 12 + profile.tagLength - 1)
        #expect(throws: SRTPError.tooShort(length: tooShortForTag.count)) { try receiver.unprotectRTP(&tooShortForTag) }
        var extensionPastTheEnd = TestPackets.rtp(sequence: 1, ssrc: 1, payload: [], extensionWords: 1)
        extensionPastTheEnd[15] = 200
        #expect(throws: SRTPError.tooShort(length: extensionPastTheEnd.count)) { try sender.protectRTP(&extensionPastTheEnd) }
        var buffer = TestPackets.rtp(sequence: 2, ssrc: 1, payload: [1])
        let count = buffer.count
        let noRoom = buffer.withUnsafeMutableBytes { bytes in Result { () throws(SRTPError) in try sender.protectRTP(bytes, length: count) } }
        #expect(noRoom == .failure(.noRoomForTag(needed: count + profile.rtpOverhead, capacity: count)))
    }

    @Test(arguments: SRTPProtectionProfile.allCases)
    func srtcpCarriesAnIncreasingIndexWithTheEFlagAndRefusesReplays(profile: SRTPProtectionProfile) throws {
        let (sender, receiver) = try Self.pair(profile)
        var protected: [[UInt8]] = []
        for round in 0..<5 {
            let plain = TestPackets.rtcp(ssrc: Self.ssrc, body: [UInt8](repeating: UInt8(round), count: 24 + 4 * round))
            var packet = plain
            try sender.protectRTCP(&packet)
            #expect(packet.count == plain.count + profile.rtcpOverhead)
            #expect(packet[0..<8] == plain[0..<8], "header and sender SSRC stay clear")
            let indexOffset = profile == .aeadAES128GCM ? packet.count - 4 : plain.count
            #expect(Array(packet[indexOffset..<(indexOffset + 4)]) == TestPackets.bigEndian(0x8000_0000 | UInt32(round)), "E=1, index \(round)")
            #expect(packet[8..<plain.count] != plain[8...], "encrypted")
            protected.append(packet)
            try receiver.unprotectRTCP(&packet)
            #expect(packet == plain)
        }
        #expect(sender.nextRTCPIndex(ssrc: Self.ssrc) == 5)
        var replay = protected[2]
        #expect(throws: SRTPError.replayed(index: 2)) { try receiver.unprotectRTCP(&replay) }
        // Clearing E (claiming the packet is not encrypted) breaks the tag, which covers it.
        var cleared = protected[4]
        let indexOffset = profile == .aeadAES128GCM ? cleared.count - 4 : cleared.count - profile.tagLength - 4
        cleared[indexOffset] &= 0x7F
        let other = try Self.pair(profile).1
        #expect(throws: SRTPError.authenticationFailed) { try other.unprotectRTCP(&cleared) }
    }

    /// Counter mode with E=0: the packet is authenticated, not encrypted (RFC 3711 §3.4). Our sender always sets E;
    /// this builds such a packet with the derived SRTCP authentication key and OpenSSL's HMAC.
    @Test func counterModeSRTCPWithTheEFlagClearIsAuthenticatedOnly() throws {
        let key = TestPackets.keyingMaterial(.aes128CMHMACSHA1_80, seed: 3)
        let keys = try SRTPKeyDerivation.sessionKeys(profile: .aes128CMHMACSHA1_80, keyingMaterial: key)
        let plain = TestPackets.rtcp(ssrc: 42, body: [UInt8](repeating: 9, count: 24))
        var packet = plain + TestPackets.bigEndian(7)
        let mac = try OpenSSLHMACSHA1Context(key: keys.rtcpAuthenticationKey)
        var digest = [UInt8](repeating: 0, count: 20)
        try mac.start()
        try mac.update(packet, count: packet.count)
        let finished = digest.withUnsafeMutableBufferPointer { digest in Result { () throws(SRTPError) in try mac.finish(into: digest.baseAddress!) } }
        try finished.get()
        packet += digest.prefix(10)
        let receiver = try SRTPReceiver(profile: .aes128CMHMACSHA1_80, keyingMaterial: key)
        try receiver.unprotectRTCP(&packet)
        #expect(packet == plain)
    }

    @Test(arguments: SRTPProtectionProfile.allCases)
    func streamsAreKeptPerSSRC(profile: SRTPProtectionProfile) throws {
        let (sender, receiver) = try Self.pair(profile)
        for sequence in UInt16(1)...20 {
            for ssrc: UInt32 in [1, 2, 3] {
                // Every stream uses the same sequence numbers: the replay window is per SSRC.
                _ = try Self.unprotect(receiver, try Self.protect(sender, sequence: sequence, ssrc: ssrc)).get()
            }
        }
    }
}

/// The limits: streams per context, and the SRTCP index before the keys must be renewed.
@Suite struct SRTPLimitTests {
    @Test(arguments: SRTPProtectionProfile.allCases)
    func aContextKeepsAtMost256Streams(profile: SRTPProtectionProfile) throws {
        let (sender, _) = try SRTPBehaviourTests.pair(profile)
        for ssrc in UInt32(1)...UInt32(SRTPStreamTable.capacity) { _ = try SRTPBehaviourTests.protect(sender, sequence: 1, ssrc: ssrc) }
        #expect(throws: SRTPError.tooManyStreams(limit: 256)) { _ = try SRTPBehaviourTests.protect(sender, sequence: 1, ssrc: 100_000) }
        _ = try SRTPBehaviourTests.protect(sender, sequence: 2, ssrc: 7) // known streams go on
    }

    @Test(arguments: SRTPProtectionProfile.allCases)
    func theSRTCPIndexStopsBefore2To31(profile: SRTPProtectionProfile) throws {
        let (sender, receiver) = try SRTPBehaviourTests.pair(profile)
        try sender.setNextRTCPIndex(0x7FFF_FFFE, ssrc: 5)
        var last = TestPackets.rtcp(ssrc: 5, body: [UInt8](repeating: 1, count: 24))
        try sender.protectRTCP(&last)
        try receiver.unprotectRTCP(&last)
        var refused = TestPackets.rtcp(ssrc: 5, body: [UInt8](repeating: 2, count: 24))
        #expect(throws: SRTPError.indexExhausted) { try sender.protectRTCP(&refused) }
    }
}

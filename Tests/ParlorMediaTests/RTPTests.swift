import Testing
@testable import ParlorMedia

/// RTP headers, RFC 8285 extensions with the RFC 6464 audio level, and the per-subscriber rewriter.
@Suite struct RTPTests {
    /// An Opus packet as Chromium sends it: one-byte extensions (audio level under id 1, and a 3-byte abs-send-time
    /// under id 2), payload type 111.
    static func chromiumPacket(sequence: UInt16 = 0x1234, timestamp: UInt32 = 0xDEAD_BEEF, ssrc: UInt32 = 0xCAFE_F00D,
                               level: UInt8 = 0x80 | 30) -> [UInt8] {
        var packet: [UInt8] = [0x90, 111]
        packet.appendUInt16(sequence)
        packet.appendUInt32(timestamp)
        packet.appendUInt32(ssrc)
        packet += [0xBE, 0xDE, 0x00, 0x02]           // one-byte profile, 2 words
        packet += [0x10, level]                       // id 1, 1 byte
        packet += [0x22, 0x01, 0x02, 0x03]            // id 2, 3 bytes
        packet += [0x00, 0x00]                        // padding
        packet += Array(repeating: 0xAA, count: 40)   // payload
        return packet
    }

    @Test func parsesTheHeaderAndTheOneByteExtensions() throws {
        let packet = Self.chromiumPacket()
        let header = try RTPHeader(parsing: packet)
        #expect(header.payloadType == 111 && !header.marker)
        #expect(header.sequenceNumber == 0x1234 && header.timestamp == 0xDEAD_BEEF && header.ssrc == 0xCAFE_F00D)
        #expect(header.extensionProfile == 0xBEDE)
        #expect(header.payloadRange == 24..<64)
        let extensions = RTPHeaderExtensions(header: header, packet: packet)
        #expect(extensions.elements.map(\.id) == [1, 2])
        #expect(extensions.element(id: 2)?.range == 19..<22)
        #expect(extensions.audioLevel(id: 1, in: packet) == AudioLevel(voiceActivity: true, level: 30))
        #expect(extensions.audioLevel(id: 3, in: packet) == nil)
    }

    @Test func parsesTwoByteExtensionsCSRCsAndPadding() throws {
        var packet: [UInt8] = [0xB2, 0x80 | 111, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3]  // padding, extension, 2 CSRCs, marker
        packet += [0, 0, 0, 10, 0, 0, 0, 11]
        packet += [0x10, 0x00, 0x00, 0x02]  // two-byte profile, 2 words
        packet += [1, 1, 0x7F, 0, 9, 2, 0xAB, 0xCD]  // id 1 (1 byte: level 127), padding, id 9 (2 bytes)
        packet += [0xEE, 0xEE, 0, 0, 3]  // payload, then 3 bytes of padding
        let header = try RTPHeader(parsing: packet)
        #expect(header.marker)
        #expect(header.csrcs(in: packet) == [10, 11])
        #expect(header.payloadRange == 32..<34)
        let extensions = RTPHeaderExtensions(header: header, packet: packet)
        #expect(extensions.elements.map(\.id) == [1, 9])
        #expect(extensions.audioLevel(id: 1, in: packet) == AudioLevel(voiceActivity: false, level: 127))
    }

    @Test func refusesWhatIsNotRTP() {
        #expect(throws: RTPError.truncated) { try RTPHeader(parsing: [0x80, 0, 0]) }
        #expect(throws: RTPError.badVersion) { try RTPHeader(parsing: Array(repeating: 0x40, count: 12)) }
        #expect(throws: RTPError.truncated) { try RTPHeader(parsing: [0x8F] + Array(repeating: 0, count: 20)) }  // 15 CSRCs
        #expect(throws: RTPError.badPadding) { try RTPHeader(parsing: [0xA0] + Array(repeating: 0, count: 11) + [0, 50]) }
        var overrun = Self.chromiumPacket()
        overrun[15] = 200  // extension of 200 words
        #expect(throws: RTPError.truncated) { try RTPHeader(parsing: overrun) }
    }

    @Test func rewriterKeepsSequenceAndTimestampContinuousAcrossASourceSwitch() throws {
        var rewriter = RTPRewriter(outgoingSSRC: 0x5151)
        var out: [RTPHeader] = []
        let ms: UInt64 = 1_000_000
        // Speaker A: sequence 100…102, 20 ms apart.
        for index in 0..<3 {
            var packet = Self.chromiumPacket(sequence: 100 + UInt16(index), timestamp: 5000 + 960 * UInt32(index), ssrc: 0xA)
            rewriter.rewrite(&packet, header: try RTPHeader(parsing: packet), now: UInt64(index) * 20 * ms)
            out.append(try RTPHeader(parsing: packet))
        }
        // Speaker B, 100 ms after A's last packet, with its own wrapping sequence numbers.
        for index in 0..<3 {
            var packet = Self.chromiumPacket(sequence: 65535 &+ UInt16(index), timestamp: 900_000 + 960 * UInt32(index), ssrc: 0xB)
            rewriter.rewrite(&packet, header: try RTPHeader(parsing: packet), now: (140 + UInt64(index) * 20) * ms)
            out.append(try RTPHeader(parsing: packet))
        }
        #expect(out.allSatisfy { $0.ssrc == 0x5151 })
        let sequences: [UInt16] = out.map(\.sequenceNumber)
        #expect(sequences == [100, 101, 102, 103, 104, 105])
        let timestamps: [UInt32] = out.map(\.timestamp)
        #expect(timestamps == [5000, 5960, 6920, 11720, 12680, 13640])  // 100 ms gap: 4800 units
        #expect(rewriter.currentSource == 0xB)
    }

    @Test func aLatePacketKeepsItsPlaceAndTheSwitchFollowsTheNewest() throws {
        var rewriter = RTPRewriter(outgoingSSRC: 1)
        for sequence: UInt16 in [10, 12, 11] {
            var packet = Self.chromiumPacket(sequence: sequence, timestamp: UInt32(sequence) * 960, ssrc: 0xA)
            rewriter.rewrite(&packet, header: try RTPHeader(parsing: packet), now: 0)
            #expect(try RTPHeader(parsing: packet).sequenceNumber == sequence)
        }
        var next = Self.chromiumPacket(sequence: 7, timestamp: 0, ssrc: 0xB)
        rewriter.rewrite(&next, header: try RTPHeader(parsing: next), now: 0)
        #expect(try RTPHeader(parsing: next).sequenceNumber == 13)
        #expect(try RTPHeader(parsing: next).timestamp == 12 * 960 + 960)
    }

    @Test func rewritingChangesOnlyTheThreeFields() throws {
        let original = Self.chromiumPacket()
        var packet = original
        var rewriter = RTPRewriter(outgoingSSRC: 9)
        rewriter.rewrite(&packet, header: try RTPHeader(parsing: packet), now: 0)
        #expect(packet[0..<2] == original[0..<2])
        #expect(packet[12...] == original[12...])
        #expect(packet.uint32(at: 8) == 9)
    }
}

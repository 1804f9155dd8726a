import Testing
@testable import ParlorMedia

/// RTCP compound packets as browsers send them, and the receiver reports the SFU builds.
@Suite struct RTCPTests {
    static func block(_ ssrc: UInt32) -> ReportBlock {
        ReportBlock(ssrc: ssrc, fractionLost: 12, cumulativeLost: -3, extendedHighestSequence: 0x0001_0005, jitter: 77,
                    lastSenderReport: 0x1234_5678, delaySinceLastSenderReport: 65536)
    }

    @Test func aReceiverReportRoundTrips() throws {
        let report = ReceiverReport(senderSSRC: 0xABCD, blocks: [Self.block(1), Self.block(2)])
        let bytes = report.serialized()
        #expect(bytes.count == 8 + 48)
        #expect(bytes[0] == 0x82 && bytes[1] == 201 && bytes.uint16(at: 2) == 13)
        #expect(try RTCPPacket.parseCompound(bytes) == [.receiverReport(report)])
    }

    /// A compound packet like Chromium's: SR with one block, SDES with a CNAME, then a NACK, a PLI and a BYE.
    @Test func parsesACompoundPacket() throws {
        var bytes: [UInt8] = [0x81, 200, 0, 12]
        bytes.appendUInt32(0xCAFE)                       // sender
        bytes.appendUInt64(0xE6A1_2345_6789_0000)        // NTP
        bytes.appendUInt32(48000)                        // RTP timestamp
        bytes.appendUInt32(50)                           // packets
        bytes.appendUInt32(4000)                         // octets
        Self.block(0x5151).append(to: &bytes)
        bytes += [0x81, 202, 0, 3]                       // SDES, one chunk of 3 words
        bytes.appendUInt32(0xCAFE)
        bytes += [1, 5] + Array("abcde".utf8) + [0]      // CNAME, end (8 bytes: 2 + 5 + 1)
        bytes += [0x81, 205, 0, 3]                       // generic NACK
        bytes.appendUInt32(0xCAFE)
        bytes.appendUInt32(0x5151)
        bytes.appendUInt16(1000)
        bytes.appendUInt16(0b101)                        // 1001 and 1003 lost too
        bytes += [0x81, 206, 0, 2]                       // PLI
        bytes.appendUInt32(0xCAFE)
        bytes.appendUInt32(0x5151)
        bytes += [0x81, 203, 0, 1]                       // BYE
        bytes.appendUInt32(0xCAFE)
        bytes += [0x80, 207, 0, 0]                       // XR, empty
        let packets = try RTCPPacket.parseCompound(bytes)
        #expect(packets.count == 6)
        guard case .senderReport(let sender) = packets[0] else { Issue.record("not an SR: \(packets[0])"); return }
        #expect(sender.ssrc == 0xCAFE && sender.packetCount == 50 && sender.octetCount == 4000 && sender.rtpTimestamp == 48000)
        #expect(sender.blocks == [Self.block(0x5151)])
        #expect(sender.compactNTP == 0x2345_6789)
        #expect(packets[1] == .sourceDescription([SourceDescriptionChunk(ssrc: 0xCAFE, cname: "abcde")]))
        #expect(packets[2] == .nack(senderSSRC: 0xCAFE, mediaSSRC: 0x5151, lost: [1000, 1001, 1003]))
        #expect(packets[3] == .pictureLossIndication(senderSSRC: 0xCAFE, mediaSSRC: 0x5151))
        #expect(packets[4] == .bye(ssrcs: [0xCAFE]))
        #expect(packets[5] == .other(packetType: 207, format: 0))
    }

    @Test func refusesBrokenCompounds() {
        #expect(throws: RTPError.truncated) { try RTCPPacket.parseCompound([0x80, 201]) }
        #expect(throws: RTPError.badVersion) { try RTCPPacket.parseCompound([0x40, 201, 0, 1, 0, 0, 0, 0]) }
        #expect(throws: RTPError.badLength) { try RTCPPacket.parseCompound([0x80, 201, 0, 9, 0, 0, 0, 0]) }
        #expect(throws: RTPError.badLength) { try RTCPPacket.parseCompound([0x81, 201, 0, 1, 0, 0, 0, 0]) }  // 1 block, no room
        #expect(throws: RTPError.badLength) { try RTCPPacket.parseCompound([0x81, 202, 0, 1, 0, 0, 0, 1]) }  // SDES without end
    }

    @Test func receptionStatisticsCountLossJitterAndWrap() {
        var statistics = RTPReceptionStatistics(ssrc: 0xA)
        let step: UInt64 = 20_000_000
        // 65533…65535, 0, 2 (1 lost), then 3: seven expected, six received, across the wrap.
        for sequence: UInt16 in [65533, 65534, 65535, 0, 2, 3] {
            let offset = UInt32(sequence &- 65533)
            statistics.record(sequence: sequence, timestamp: 960 * offset, arrival: UInt64(offset) * step)
        }
        let sender = SenderReport(ssrc: 0xA, ntpTimestamp: 0x0000_1111_2222_0000, rtpTimestamp: 0, packetCount: 0, octetCount: 0, blocks: [])
        statistics.record(sender, arrival: 1_000_000_000)
        let block = statistics.reportBlock(now: 1_500_000_000)
        #expect(block.extendedHighestSequence == 0x0001_0003)
        #expect(block.cumulativeLost == 1)
        #expect(block.fractionLost == UInt8(256 / 7))
        #expect(block.jitter == 0)  // perfectly paced
        #expect(block.lastSenderReport == 0x1111_2222)
        #expect(block.delaySinceLastSenderReport == 32768)  // 0.5 s
        // A new interval with nothing lost reports no fraction lost.
        statistics.record(sequence: 4, timestamp: 960 * 7, arrival: 7 * step)
        #expect(statistics.reportBlock(now: 2_000_000_000).fractionLost == 0)
    }

    @Test func jitterGrowsWithUnevenArrival() {
        var statistics = RTPReceptionStatistics(ssrc: 1)
        for index in 0..<50 {
            let late: UInt64 = index % 2 == 0 ? 0 : 10_000_000
            statistics.record(sequence: UInt16(index), timestamp: 960 * UInt32(index), arrival: UInt64(index) * 20_000_000 + late)
        }
        #expect(statistics.reportBlock(now: 0).jitter > 300)  // about 480 units (10 ms at 48 kHz) once converged
    }
}

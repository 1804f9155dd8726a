import Foundation
import Testing
@testable import ParlorRecording

@Suite struct OggCRCTests {
    @Test func checkValueIsCRC32CksumWithoutItsFinalInversion() {
        // CRC-32/CKSUM (same polynomial, initial value and bit order) checks "123456789" to 0x765E7680 after inverting.
        #expect(OggCRC.checksum(Array("123456789".utf8)) == ~UInt32(0x765E_7680))
        #expect(OggCRC.checksum([UInt8]()) == 0)
    }
}

/// Pages and lacing (RFC 3533), against pages ffmpeg's own Ogg muxer wrote.
@Suite struct OggPageTests {
    /// A 20 ms CELT packet's TOC (config 31, code 0) followed by filler: libopus reads 960 samples from it.
    static func packet(size: Int, fill: UInt8 = 0xAB) -> [UInt8] { [0xF8] + [UInt8](repeating: fill, count: size - 1) }

    @Test(arguments: [(254, [254]), (255, [255, 0]), (256, [255, 1]), (510, [255, 255, 0]), (1, [1])] as [(Int, [UInt8])])
    func lacesPacketsOf254To510Bytes(size: Int, lacing: [UInt8]) throws {
        var writer = OggStreamWriter(serialNumber: 7)
        #expect(writer.append(packet: Self.packet(size: size), granulePosition: 960).isEmpty)
        let bytes = writer.flush()
        let page = try OggPage(parsing: bytes)
        #expect(page.lacingValues == lacing)
        #expect(page.body == Self.packet(size: size))
        #expect(page.size == bytes.count && page.granulePosition == 960 && page.flags == .beginningOfStream)
    }

    @Test func aPacketLongerThanAPageSpansPagesMarkedContinued() throws {
        var writer = OggStreamWriter(serialNumber: 0xDEAD_BEEF)
        let big = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var bytes = writer.append(packet: big, granulePosition: 960)
        bytes += writer.append(packet: Self.packet(size: 10), granulePosition: 1_920)
        bytes += writer.flush(endOfStream: true)
        var pages: [OggPage] = []
        var offset = 0
        while offset < bytes.count {
            let page = try OggPage(parsing: bytes, at: offset)
            pages.append(page)
            offset += page.size
        }
        #expect(pages.count == 2)
        #expect(pages.map(\.sequenceNumber) == [0, 1])
        #expect(pages[0].lacingValues.count == 255 && pages[0].lacingValues.allSatisfy { $0 == 255 })
        #expect(pages[0].granulePosition == OggPage.noGranulePosition, "no packet ends on the first page")
        #expect(pages[0].flags == .beginningOfStream && pages[1].flags == [.continued, .endOfStream])
        #expect(pages[1].granulePosition == 1_920)
        #expect(pages[0].body + pages[1].body == big + Self.packet(size: 10))
    }

    @Test func aCorruptByteFailsTheChecksumAndShortInputIsTruncated() throws {
        var writer = OggStreamWriter(serialNumber: 1)
        _ = writer.append(packet: Self.packet(size: 100), granulePosition: 960)
        let bytes = writer.flush()
        var corrupt = bytes
        corrupt[40] ^= 0x01
        #expect(throws: OggError.badChecksum(sequenceNumber: 0)) { try OggPage(parsing: corrupt) }
        #expect(throws: OggError.truncated) { try OggPage(parsing: Array(bytes.dropLast())) }
        #expect(throws: OggError.notAPage(offset: 0)) { try OggPage(parsing: [UInt8](repeating: 0, count: 64)) }
    }

    /// Every page of a file ffmpeg's Ogg muxer wrote parses (so our checksum is theirs) and writes back identical.
    @Test func ffmpegsPagesCheckAndRoundTrip() throws {
        guard Tools.installed("ffmpeg") else { return }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("parlor-ffmpeg-\(UUID().uuidString).opus")
        defer { try? FileManager.default.removeItem(at: url) }
        let made = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=2",
                                            "-c:a", "libopus", "-ac", "1", url.path])
        try #require(made.status == 0, "ffmpeg: \(made.errors)")
        let bytes = [UInt8](try Data(contentsOf: url))
        var offset = 0, count = 0
        while offset < bytes.count {
            let page = try OggPage(parsing: bytes, at: offset)
            #expect(page.serialized() == Array(bytes[offset..<offset + page.size]))
            offset += page.size
            count += 1
        }
        #expect(count >= 3)
        var reader = try OggOpusReader(bytes: bytes)
        #expect(reader.head.channelCount == 1 && reader.head.preSkip > 0)
        let packets = try reader.readAll()
        // 2 s at 48 kHz after the pre-skip: the last granule position says so.
        #expect(packets.last.map { $0.granulePosition - Int64(reader.head.preSkip) } == 96_000)
        #expect(packets.dropLast().allSatisfy { $0.samples == 960 })
    }
}

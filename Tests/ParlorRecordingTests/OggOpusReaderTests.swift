import Foundation
import Testing
@testable import ParlorRecording

/// The reader: round trips, and every truncation and corruption of a real file is a typed error, never a trap.
@Suite struct OggOpusReaderTests {
    /// 3 s of tone written by the track writer with 200-byte pages' worth of flushes (one every 100 ms).
    static func smallFile() throws -> [UInt8] {
        var source = try ToneSource()
        let sent = try (0..<25).map { _ in try source.next(frequency: 440) }
        var writer = OpusTrackWriter(serialNumber: 9, tags: OpusTags(comments: ["TITLE=reader test"]), flushInterval: .milliseconds(100))
        return OpusTrackWriterTests.record(sent, end: .milliseconds(600), writer: &writer)
    }

    /// (offset just past each page, packets completed by then).
    static func pageEnds(_ bytes: [UInt8]) throws -> [(end: Int, packets: Int)] {
        var ends: [(Int, Int)] = [], offset = 0, packets = 0, open = false
        while offset < bytes.count {
            let page = try OggPage(parsing: bytes, at: offset)
            offset += page.size
            for value in page.lacingValues where value < 255 { packets += 1 }
            open = page.lacingValues.last == 255
            ends.append((offset, packets))
        }
        #expect(!open)
        return ends
    }

    @Test func readsWhatTheWriterWrote() throws {
        let bytes = try Self.smallFile()
        var reader = try OggOpusReader(bytes: bytes)
        #expect(reader.head == OpusHead(channelCount: 1, preSkip: 3_840))
        #expect(reader.tags == OpusTags(vendor: "Parlor", comments: ["TITLE=reader test"]))
        let packets = try reader.readAll()
        #expect(packets.first?.granulePosition == 960)
        // Each packet ends where the next begins.
        #expect(zip(packets, packets.dropFirst()).allSatisfy { $0.granulePosition + Int64($1.samples) == $1.granulePosition })
        #expect(packets.last?.granulePosition == Int64(3_840 + 600 * 48))
        #expect(try reader.next() == nil)
    }

    @Test func aFileCutAtAnyByteYieldsThePacketsOfItsWholePagesThenTruncated() throws {
        let bytes = try Self.smallFile()
        let ends = try Self.pageEnds(bytes)
        // Pages 0 and 1 are the headers: packets counted from the third page on.
        let headerPackets = ends[1].packets
        for cut in 0..<bytes.count {
            let prefix = Array(bytes[0..<cut])
            guard cut >= ends[1].end else {
                #expect(throws: OggOpusError.self) { try OggOpusReader(bytes: prefix) }
                continue
            }
            var reader = try OggOpusReader(bytes: prefix)
            var count = 0
            var failure: OggOpusError?
            do {
                while try reader.next() != nil { count += 1 }
            } catch { failure = error }
            let whole = ends.last { $0.end <= cut }!.packets - headerPackets
            #expect(count == whole, "cut at \(cut)")
            #expect(failure == .truncated, "cut at \(cut): \(String(describing: failure))")
        }
    }

    @Test func everyFlippedByteIsATypedErrorOrHarmless() throws {
        let bytes = try Self.smallFile()
        var refused = 0
        for index in bytes.indices {
            var corrupt = bytes
            corrupt[index] ^= 0x20
            do {
                var reader = try OggOpusReader(bytes: corrupt)
                _ = try reader.readAll()
            } catch {
                refused += 1
            }
        }
        // The checksum covers every byte of a page but itself: each flip is caught.
        #expect(refused == bytes.count)
    }

    @Test func refusesStreamsItDoesNotRead() throws {
        #expect(throws: OggOpusError.truncated) { try OggOpusReader(bytes: []) }
        #expect(throws: OggOpusError.ogg(.notAPage(offset: 0))) { try OggOpusReader(bytes: Array("not an ogg file at all, no".utf8)) }
        // A page of Vorbis, not Opus.
        var writer = OggStreamWriter(serialNumber: 1)
        _ = writer.append(packet: [1] + Array("vorbis".utf8) + [UInt8](repeating: 0, count: 23), granulePosition: 0)
        #expect(throws: OggOpusError.notOpus) { try OggOpusReader(bytes: writer.flush()) }
        // A second logical stream interleaved.
        let bytes = try Self.smallFile()
        var other = OggStreamWriter(serialNumber: 2)
        _ = other.append(packet: OpusHead(preSkip: 0).serialized(), granulePosition: 0)
        let ends = try Self.pageEnds(bytes)
        let mixed = Array(bytes[0..<ends[2].end]) + other.flush() + Array(bytes[ends[2].end...])
        var reader = try OggOpusReader(bytes: mixed)
        #expect(throws: OggOpusError.unsupportedStream(serialNumber: 2)) { _ = try reader.readAll() }
    }
}

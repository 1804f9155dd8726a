import Foundation
import Testing
@testable import ParlorRecording

/// The track writer's time line: granule positions from RTP timestamps, reordering, duplicates, gaps, flushing.
@Suite struct OpusTrackWriterTests {
    typealias RTP = (sequence: UInt16, timestamp: UInt32, payload: [UInt8])

    static func packets(_ count: Int, source: inout ToneSource, frequency: Double = 440) throws -> [RTP] {
        try (0..<count).map { _ in try source.next(frequency: frequency) }
    }

    /// Feeds packets arriving every 20 ms from `start` (packet i at start + 20 ms * i, unless `arrivals` says),
    /// advancing every 20 ms; finishes at `end`. Returns the file.
    static func record(_ packets: [RTP], arrivals: [Int]? = nil, end: Duration, writer: inout OpusTrackWriter,
                       onAdvance: (Duration, [UInt8]) -> Void = { _, _ in }) -> [UInt8] {
        var bytes: [UInt8] = []
        let arrivalMilliseconds = arrivals ?? packets.indices.map { $0 * 20 }
        var next = 0
        let order = packets.indices.sorted { arrivalMilliseconds[$0] < arrivalMilliseconds[$1] }
        var now = 0
        while Duration.milliseconds(now) < end {
            while next < order.count, arrivalMilliseconds[order[next]] <= now {
                let packet = packets[order[next]]
                writer.receive(sequence: packet.sequence, timestamp: packet.timestamp, payload: packet.payload, arrival: .milliseconds(arrivalMilliseconds[order[next]]))
                next += 1
            }
            let written = writer.advance(to: .milliseconds(now))
            onAdvance(.milliseconds(now), written)
            bytes += written
            now += 20
        }
        return bytes + writer.finish(at: end)
    }

    static func read(_ bytes: [UInt8]) throws -> (head: OpusHead, packets: [OggOpusReader.Packet]) {
        var reader = try OggOpusReader(bytes: bytes)
        return (reader.head, try reader.readAll())
    }

    /// The audio packets of `bytes` minus the 80 ms of silence before the start.
    static func audio(_ packets: [OggOpusReader.Packet]) -> [OggOpusReader.Packet] {
        Array(packets.drop { $0.granulePosition <= Int64(OpusTrackWriter.preSkip) })
    }

    @Test func packetsInOrderAreWrittenAsTheyCameWithGranulesAt48kHz() throws {
        var source = try ToneSource()
        let sent = try Self.packets(100, source: &source)
        var writer = OpusTrackWriter(serialNumber: 1)
        let file = try Self.read(Self.record(sent, end: .seconds(2), writer: &writer))
        #expect(file.head.preSkip == 3_840)
        let audio = Self.audio(file.packets)
        #expect(Array(audio.prefix(100).map(\.data)) == sent.map(\.payload), "the packets as sent, in order")
        #expect(audio.prefix(100).enumerated().allSatisfy { $0.element.granulePosition == 3_840 + Int64($0.offset + 1) * 960 })
        #expect(writer.statistics.packets == 100 && writer.statistics.silenceSamples < 960)
        #expect(file.packets.last!.granulePosition - 3_840 == 96_000, "ends at 2 s")
    }

    @Test func timestampsWrappingPast2To32KeepCounting() throws {
        var source = try ToneSource(sequence: 65_500, timestamp: UInt32.max - 960 * 20 + 1)
        let sent = try Self.packets(60, source: &source)
        #expect(sent.last!.timestamp < sent.first!.timestamp, "the timestamps wrapped")
        var writer = OpusTrackWriter(serialNumber: 2)
        let audio = Self.audio(try Self.read(Self.record(sent, end: .milliseconds(1_200), writer: &writer)).packets)
        #expect(Array(audio.prefix(60).map(\.data)) == sent.map(\.payload), "the packets as sent, in order")
        #expect(audio[59].granulePosition == 3_840 + 60 * 960)
        #expect(writer.statistics.silenceSamples < 960)
    }

    @Test func packetsReorderedWithinTheWindowAreSortedAndDuplicatesDropped() throws {
        var source = try ToneSource()
        let sent = try Self.packets(50, source: &source)
        // Each pair swapped (the later one 30 ms late), and every fifth packet sent twice.
        var order: [RTP] = [], arrivals: [Int] = []
        for index in stride(from: 0, to: 50, by: 2) {
            order += [sent[index + 1], sent[index]]
            arrivals += [index * 20 + 20, index * 20 + 50]
        }
        for index in stride(from: 0, to: 50, by: 5) {
            order.append(sent[index])
            arrivals.append(index * 20 + 60)
        }
        var writer = OpusTrackWriter(serialNumber: 3)
        let audio = Self.audio(try Self.read(Self.record(order, arrivals: arrivals, end: .milliseconds(1_200), writer: &writer)).packets)
        #expect(Array(audio.prefix(50).map(\.data)) == sent.map(\.payload), "the packets in sequence order")
        #expect(writer.statistics.packets == 50)
        #expect(writer.statistics.duplicates + writer.statistics.late == 10)
    }

    @Test func gapsAreFilledWithSilenceSoLaterPacketsKeepTheirTime() throws {
        var source = try ToneSource()
        var sent = try Self.packets(100, source: &source)
        // 300 ms lost from 0.5 s; the speaker's first packet arrives 400 ms after the recording started.
        sent.removeSubrange(25..<40)
        let arrivals = sent.map { Int($0.timestamp &- 123_456) / 48 + 400 }
        var writer = OpusTrackWriter(serialNumber: 4)
        let packets = try Self.read(Self.record(sent, arrivals: arrivals, end: .milliseconds(2_400), writer: &writer)).packets
        let position = { (payload: [UInt8]) in packets.first { $0.data == payload }.map { $0.granulePosition - 3_840 - Int64($0.samples) } }
        let first = position(sent[0].payload), afterGap = position(sent[25].payload)
        #expect(first == Int64(400 * 48), "the first packet sits where it arrived")
        #expect(afterGap == Int64((400 + 800) * 48), "after the gap, at its timestamp's place")
        #expect(writer.statistics.silenceSamples == Int64(400 + 300) * 48)
        #expect(packets.last!.granulePosition - 3_840 == 2_400 * 48)
    }

    @Test func pagesAreFlushedAtLeastOnceASecondEvenWhenTheSpeakerIsSilent() throws {
        var source = try ToneSource()
        // 2 s of packets, then nothing (muted) for 3 s.
        let sent = try Self.packets(100, source: &source)
        var writer = OpusTrackWriter(serialNumber: 5)
        var lastOutput = Duration.zero, longestQuiet = Duration.zero
        var written: [UInt8] = []
        _ = Self.record(sent, end: .seconds(5), writer: &writer) { now, bytes in
            written += bytes
            guard !bytes.isEmpty else { return }
            longestQuiet = max(longestQuiet, now - lastOutput)
            lastOutput = now
            // What is on disk now plays to within 1.1 s of now (the window and one flush interval).
            var reader = try? OggOpusReader(bytes: written)
            var end: Int64 = 0
            while let packet = try? reader?.next() { end = packet.granulePosition }
            #expect(Duration.milliseconds(max(0, end - 3_840) / 48) >= now - .milliseconds(1_100), "at \(now): plays to \(end)")
        }
        #expect(longestQuiet <= .milliseconds(1_020), "pages every second, mute included: longest wait \(longestQuiet)")
    }

    @Test func garbageAndHostileTimestampsAreRefusedOrBounded() throws {
        var writer = OpusTrackWriter(serialNumber: 6)
        #expect(writer.receive(sequence: 1, timestamp: 0, payload: [], arrival: .zero) == .invalid)
        var source = try ToneSource()
        // Timestamps an hour ahead of the clock, sequence numbers in order: re-anchored to the clock, not held.
        var packet = try source.next(frequency: 440)
        #expect(writer.receive(sequence: packet.sequence, timestamp: packet.timestamp, payload: packet.payload, arrival: .zero) == .accepted)
        packet = try source.next(frequency: 440)
        #expect(writer.receive(sequence: packet.sequence, timestamp: packet.timestamp &+ 48_000 * 3_600, payload: packet.payload,
                               arrival: .milliseconds(20)) == .accepted)
        let file = try Self.read(writer.advance(to: .milliseconds(200)) + writer.finish(at: .milliseconds(200)))
        #expect(file.packets.last!.granulePosition - 3_840 <= 200 * 48 + 120)
    }

    /// Found by the ogg-opus fuzz target: packets placed ahead of the clock (under the 1 s that re-anchors) were
    /// written at the end anyway, making the file longer than the recording.
    @Test func packetsPlacedAfterTheEndAreNotWritten() throws {
        var writer = OpusTrackWriter(serialNumber: 7)
        var source = try ToneSource()
        let first = try source.next(frequency: 440), second = try source.next(frequency: 440)
        #expect(writer.receive(sequence: first.sequence, timestamp: first.timestamp, payload: first.payload, arrival: .zero) == .accepted)
        #expect(writer.receive(sequence: second.sequence, timestamp: second.timestamp &+ 900 * 48, payload: second.payload,
                               arrival: .milliseconds(20)) == .accepted)
        let file = try Self.read(writer.finish(at: .milliseconds(100)))
        #expect(file.packets.last!.granulePosition - 3_840 == 100 * 48)
        #expect(!file.packets.contains { $0.data == second.payload })
    }
}

@Suite struct OpusSilenceTests {
    @Test func silenceFramesAreTinyAndDecodeToSilenceOfTheirLength() throws {
        #expect(OpusSilence.frames.map(\.samples) == [960, 480, 240, 120])
        let decoder = try OpusDecoder(channelCount: 1)
        for frame in OpusSilence.frames {
            #expect(frame.packet.count <= 3, "\(frame.samples) samples in \(frame.packet.count) bytes")
            #expect(Opus.sampleCount(of: frame.packet) == frame.samples)
            let pcm = try decoder.decode(frame.packet)
            #expect(pcm.count == frame.samples && pcm.allSatisfy { abs(Int($0)) <= 1 })
        }
        let covering = OpusSilence.packets(covering: 960 * 2 + 480 + 120 + 100)
        #expect(covering.packets.map(\.samples) == [960, 960, 480, 120] && covering.remainder == 100)
    }
}

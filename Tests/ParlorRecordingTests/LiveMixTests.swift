import Foundation
import Synchronization
import Testing
@testable import ParlorRecording

/// `LiveMix`, the live stream's mixer on its own thread: the headers first, then pages at least every 250 ms that
/// carry what the speaker sent, and a speaker silent past the timeout leaves the mix.
@Suite struct LiveMixTests {
    @Test func pagesComeEveryQuarterSecondAndCarryTheSpeakersTone() throws {
        let delivered = Mutex<[(at: UInt64, bytes: [UInt8])]>([])
        let mix = try LiveMix(roomID: "R1") { pages in delivered.withLock { $0.append((MonotonicTime.now(), pages)) } }
        defer { mix.stop() }
        #expect(Array(mix.headerPages.prefix(4)) == Array("OggS".utf8))
        #expect(mix.headerPages.count > 28 + 8 && Array(mix.headerPages[28..<36]) == Array("OpusHead".utf8))

        // 1.5 s of a 440 Hz tone, at a speaker's pace: a 20 ms packet every 20 ms.
        var source = try ToneSource()
        for _ in 0..<75 {
            let packet = try source.next(frequency: 440)
            mix.append(rtp: Self.rtp(packet), member: "A", arrival: MonotonicTime.now())
            usleep(20_000)
        }
        let pages = delivered.withLock { $0 }
        #expect(pages.count >= 5, "\(pages.count) deliveries in 1.5 s")
        let gaps = zip(pages.dropFirst(), pages).map { Double($0.at - $1.at) / 1e9 }
        #expect(gaps.allSatisfy { $0 < 0.4 }, "pages \(gaps) s apart")

        var reader = try OggOpusReader(bytes: mix.headerPages + pages.flatMap(\.bytes))
        let decoder = try OpusDecoder(channelCount: 1)
        var samples: [Int16] = []
        do {
            while let packet = try reader.next() { samples += try decoder.decode(packet.data) }
        } catch OggOpusError.truncated {}  // a live stream has no end-of-stream page
        #expect(samples.count >= 48_000, "\(samples.count) samples mixed")
        let last = samples.suffix(24_000)
        #expect(Spectrum.power(last, at: 440) > 20 * Spectrum.power(last, at: 590))
    }

    @Test func aSpeakerSilentPastTheTimeoutLeavesTheMixAndComesBackWhenHeard() throws {
        let mix = try LiveMix(roomID: "R2", speakerTimeout: .milliseconds(300)) { _ in }
        defer { mix.stop() }
        var a = try ToneSource(), b = try ToneSource(sequence: 5, timestamp: 9)
        // A speaks for 0.1 s, then only B, for longer than the timeout: A leaves the mix, B stays.
        var sawTwo = false
        for tick in 0..<40 {
            if tick < 5 { mix.append(rtp: Self.rtp(try a.next(frequency: 440)), member: "A", arrival: MonotonicTime.now()) }
            mix.append(rtp: Self.rtp(try b.next(frequency: 660)), member: "B", arrival: MonotonicTime.now())
            usleep(20_000)
            if mix.speakerCount == 2 { sawTwo = true }
        }
        #expect(sawTwo)
        #expect(mix.speakerCount == 1)
        mix.append(rtp: Self.rtp(try a.next(frequency: 440)), member: "A", arrival: MonotonicTime.now())
        let deadline = Date().addingTimeInterval(2)
        while mix.speakerCount != 2, Date() < deadline { usleep(5_000) }
        #expect(mix.speakerCount == 2, "A is mixed again at their next packet")
    }

    /// A version 2 RTP packet (payload type 111, SSRC 7) around an Opus payload.
    static func rtp(_ packet: (sequence: UInt16, timestamp: UInt32, payload: [UInt8])) -> [UInt8] {
        [0x80, 111, UInt8(packet.sequence >> 8), UInt8(packet.sequence & 0xFF),
         UInt8(packet.timestamp >> 24), UInt8(packet.timestamp >> 16 & 0xFF), UInt8(packet.timestamp >> 8 & 0xFF), UInt8(packet.timestamp & 0xFF),
         0, 0, 0, 7] + packet.payload
    }
}

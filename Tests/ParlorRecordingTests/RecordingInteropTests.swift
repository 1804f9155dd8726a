import Foundation
import Testing
@testable import ParlorRecording

/// The files as independent tools see them: opusinfo (Debian's opus-tools, on libogg and libopus) and ffmpeg (its own
/// Ogg demuxer and Opus decoder). Without them the tests fail and say what to install; they are not skipped.
@Suite struct RecordingInteropTests {
    /// Speaker A: 440 Hz for 2 s, 1 s of silence (DTX: nothing sent), 660 Hz for 2 s; 5 % of packets lost and some
    /// reordered. Starts 300 ms after the recording.
    static func speakerA() throws -> (packets: [OpusTrackWriterTests.RTP], arrivals: [Int]) {
        var source = try ToneSource(sequence: 65_000, timestamp: UInt32.max - 48_000)
        var packets: [OpusTrackWriterTests.RTP] = [], arrivals: [Int] = []
        for index in 0..<250 {
            let frequency: Double = index < 100 ? 440 : index < 150 ? 0 : 660
            let packet = try source.next(frequency: frequency)
            if (100..<150).contains(index) { continue }  // DTX
            if index % 20 == 7 { continue }  // 5 % lost
            packets.append(packet)
            // Every tenth packet 40 ms late, behind the two after it.
            arrivals.append(300 + index * 20 + (index % 10 == 3 ? 40 : 0))
        }
        return (packets, arrivals)
    }

    @Test func opusinfoAndFFmpegReadATrackWithItsGapsFilled() throws {
        guard Tools.installed("opusinfo"), Tools.installed("ffmpeg") else { return }
        let (packets, arrivals) = try Self.speakerA()
        var writer = OpusTrackWriter(serialNumber: 0x5151)
        let bytes = OpusTrackWriterTests.record(packets, arrivals: arrivals, end: .milliseconds(5_500), writer: &writer)
        let url = try Tools.temporaryFile(bytes)
        defer { Tools.remove(url) }
        let decoded = try Tools.playsCleanly(url, seconds: 5.5)
        // 440 Hz from 0.3 s to 2.3 s, silence to 3.3 s, 660 Hz to 5.3 s (± 50 ms at the edges).
        let first = Spectrum.window(decoded, from: 0.35, to: 2.25), pause = Spectrum.window(decoded, from: 2.35, to: 3.25)
        let second = Spectrum.window(decoded, from: 3.35, to: 5.25), before = Spectrum.window(decoded, from: 0, to: 0.25)
        #expect(Spectrum.power(first, at: 440) > 100 * Spectrum.power(first, at: 660))
        #expect(Spectrum.power(second, at: 660) > 100 * Spectrum.power(second, at: 440))
        #expect(Spectrum.energy(pause) < Spectrum.energy(first) / 1_000 && Spectrum.energy(before) < Spectrum.energy(first) / 1_000)
        // The tone starts within 50 ms of 0.3 s: loud at 0.33–0.35 s, quiet at 0.23–0.25 s.
        #expect(Spectrum.energy(Spectrum.window(decoded, from: 0.33, to: 0.35)) > 100 * Spectrum.energy(Spectrum.window(decoded, from: 0.23, to: 0.25)))
    }

    @Test func aTrackCutOffAtAnyByteDecodesUpToItsLastWholePage() throws {
        guard Tools.installed("ffmpeg"), Tools.installed("opusinfo") else { return }
        let (packets, arrivals) = try Self.speakerA()
        var writer = OpusTrackWriter(serialNumber: 0x5152)
        let bytes = OpusTrackWriterTests.record(packets, arrivals: arrivals, end: .milliseconds(5_500), writer: &writer)
        var offsets: [Int] = [], granules: [Int64] = [], offset = 0
        while offset < bytes.count {
            let page = try OggPage(parsing: bytes, at: offset)
            offset += page.size
            offsets.append(offset)
            granules.append(page.granulePosition)
        }
        // As kill -9 would leave it: cut inside the fourth audio page, and inside the last.
        for cut in [offsets[4] + 100, offsets[offsets.count - 2] + 1] {
            let url = try Tools.temporaryFile(Array(bytes[0..<cut]))
            defer { Tools.remove(url) }
            let whole = offsets.lastIndex { $0 <= cut }!
            let expected = Int(granules[whole]) - 3_840
            let decoded = try Tools.ffmpegDecode(url).samples
            #expect(abs(decoded.count - expected) <= 960, "cut at \(cut): ffmpeg decoded \(decoded.count), the whole pages hold \(expected)")
            #expect(expected >= (cut > offsets[5] ? 4_000 : 1_000) * 48)
            // opusinfo warns of the missing end of stream and nothing else (it also exits 1 on such a file).
            let report = try Tools.run("opusinfo", [url.path])
            let warnings = String(decoding: report.output, as: UTF8.self).split(separator: "\n").filter { $0.contains("WARNING") }
            #expect(warnings.count == 1 && warnings[0].contains("EOS not set"), "opusinfo: \(warnings)")
        }
    }

    @Test func theMixCarriesBothSpeakersAndOpusinfoAndFFmpegAgree() throws {
        guard Tools.installed("opusinfo"), Tools.installed("ffmpeg") else { return }
        let (aPackets, aArrivals) = try Self.speakerA()
        // Speaker B: 880 Hz from 2.3 s to 3.3 s, in A's pause, and again under A's 660 Hz from 4 s to 5 s.
        var b = try ToneSource(sequence: 7, timestamp: 99)
        var bPackets: [OpusTrackWriterTests.RTP] = [], bArrivals: [Int] = []
        for index in 0..<135 {
            let packet = try b.next(frequency: 880)
            guard index < 50 || index >= 85 else { continue }
            bPackets.append(packet)
            bArrivals.append(2_300 + index * 20)
        }
        let mixer = try OpusMixer<String>(serialNumber: 0x3000)
        var bytes: [UInt8] = []
        var a = 0, bIndex = 0
        for now in stride(from: 0, to: 5_500, by: 20) {
            while a < aPackets.count, aArrivals[a] <= now {
                try mixer.receive(from: "A", sequence: aPackets[a].sequence, timestamp: aPackets[a].timestamp, payload: aPackets[a].payload, arrival: .milliseconds(aArrivals[a]))
                a += 1
            }
            while bIndex < bPackets.count, bArrivals[bIndex] <= now {
                try mixer.receive(from: "B", sequence: bPackets[bIndex].sequence, timestamp: bPackets[bIndex].timestamp, payload: bPackets[bIndex].payload, arrival: .milliseconds(bArrivals[bIndex]))
                bIndex += 1
            }
            bytes += try mixer.advance(to: .milliseconds(now))
        }
        bytes += try mixer.finish(at: .milliseconds(5_500))
        let url = try Tools.temporaryFile(bytes, name: "mix.opus")
        defer { Tools.remove(url) }
        let decoded = try Tools.playsCleanly(url, seconds: 5.5)
        // B comes in at 2.3 s (± 50 ms), on the mix's time line as on its track's.
        let bBefore = Spectrum.power(Spectrum.window(decoded, from: 2.23, to: 2.25), at: 880)
        let bAfter = Spectrum.power(Spectrum.window(decoded, from: 2.33, to: 2.35), at: 880)
        #expect(bAfter > 10 * bBefore, "880 Hz before 2.25 s: \(bBefore), after 2.33 s: \(bAfter)")
        let aOnly = Spectrum.window(decoded, from: 0.4, to: 2.2), bOnly = Spectrum.window(decoded, from: 2.4, to: 3.2)
        let both = Spectrum.window(decoded, from: 4.1, to: 4.9)
        #expect(Spectrum.power(aOnly, at: 440) > 100 * Spectrum.power(aOnly, at: 880))
        #expect(Spectrum.power(bOnly, at: 880) > 100 * Spectrum.power(bOnly, at: 440))
        let together660 = Spectrum.power(both, at: 660), together880 = Spectrum.power(both, at: 880)
        #expect(together660 > 100 * Spectrum.power(both, at: 440) && together880 > 100 * Spectrum.power(both, at: 440))
        #expect(together660 / together880 > 0.25 && together660 / together880 < 4, "both speakers about as loud in the mix")
        #expect(mixer.saturatedSamples == 0)
    }

    @Test func loudSpeakersTogetherSaturateInsteadOfWrappingAround() throws {
        guard Tools.installed("ffmpeg") else { return }
        let mixer = try OpusMixer<Int>(serialNumber: 0x3001)
        var sources = try [ToneSource(), ToneSource(sequence: 5, timestamp: 5)]
        var bytes: [UInt8] = []
        for step in 0..<100 {
            for speaker in 0..<2 {
                let packet = try sources[speaker].next(frequency: 440, amplitude: 24_000)
                try mixer.receive(from: speaker, sequence: packet.sequence, timestamp: packet.timestamp, payload: packet.payload, arrival: .milliseconds(step * 20))
            }
            bytes += try mixer.advance(to: .milliseconds(step * 20))
        }
        bytes += try mixer.finish(at: .seconds(2))
        #expect(mixer.saturatedSamples > 10_000)
        let url = try Tools.temporaryFile(bytes, name: "loud.opus")
        defer { Tools.remove(url) }
        let decoded = Spectrum.window(try Tools.ffmpegDecode(url).samples, from: 0.2, to: 1.8)
        // Clipped, the tone keeps most of its energy at 440 Hz; wrapped around, it would be noise.
        let fundamental = 2 * Spectrum.power(decoded, at: 440)
        #expect(fundamental / Spectrum.energy(decoded) > 0.8, "440 Hz holds \(fundamental / Spectrum.energy(decoded)) of the energy")
    }
}

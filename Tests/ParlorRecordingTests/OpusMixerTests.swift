import Testing
@testable import ParlorRecording

/// The mixer on its own, read back with our reader and libopus: speakers joining and leaving, and its length.
@Suite struct OpusMixerTests {
    /// Decodes a mix with libopus after the reader, dropping the pre-skip as a player does.
    static func decode(_ bytes: [UInt8]) throws -> [Int16] {
        var reader = try OggOpusReader(bytes: bytes)
        let decoder = try OpusDecoder(channelCount: 1)
        var pcm: [Int16] = []
        var end: Int64 = 0
        while let packet = try reader.next() {
            pcm += try decoder.decode(packet.data)
            end = packet.granulePosition
        }
        // The last page's granule position trims the padding.
        return Array(pcm[Int(reader.head.preSkip)..<Int(end)])
    }

    @Test func aSpeakerWhoLeavesIsNoLongerMixedAndOneWhoJoinsLateStartsWhereTheyJoined() throws {
        let mixer = try OpusMixer<String>(serialNumber: 1)
        var a = try ToneSource(), b = try ToneSource(sequence: 9, timestamp: 77)
        var bytes: [UInt8] = []
        for step in 0..<150 {
            let now = Duration.milliseconds(step * 20)
            if step < 100 {
                let packet = try a.next(frequency: 440)
                try mixer.receive(from: "A", sequence: packet.sequence, timestamp: packet.timestamp, payload: packet.payload, arrival: now)
            }
            if step >= 50 {
                let packet = try b.next(frequency: 1_000)
                try mixer.receive(from: "B", sequence: packet.sequence, timestamp: packet.timestamp, payload: packet.payload, arrival: now)
            }
            if step == 110 { mixer.removeSpeaker("A") }
            bytes += try mixer.advance(to: now)
        }
        #expect(Set(mixer.speakers) == ["B"])
        bytes += try mixer.finish(at: .seconds(3))
        let pcm = try Self.decode(bytes)
        #expect(pcm.count == 3 * 48_000)
        let early = Spectrum.window(pcm, from: 0.1, to: 0.9), both = Spectrum.window(pcm, from: 1.1, to: 1.9)
        let late = Spectrum.window(pcm, from: 2.3, to: 2.9)
        #expect(Spectrum.power(early, at: 440) > 100 * Spectrum.power(early, at: 1_000), "only A before 1 s")
        #expect(Spectrum.power(both, at: 440) > 0.25 * Spectrum.power(both, at: 1_000) && Spectrum.power(both, at: 1_000) > 0.25 * Spectrum.power(both, at: 440))
        #expect(Spectrum.power(late, at: 1_000) > 100 * Spectrum.power(late, at: 440), "only B after A left")
        #expect(mixer.saturatedSamples == 0)
    }

    @Test func anEmptyRecordingIsAValidFileOfItsLength() throws {
        let mixer = try OpusMixer<Int>(serialNumber: 2)
        let bytes = try mixer.advance(to: .milliseconds(500)) + mixer.finish(at: .milliseconds(510))
        let pcm = try Self.decode(bytes)
        #expect(pcm.count == 510 * 48 && pcm.allSatisfy { $0 == 0 })
    }
}

import Foundation
import ParlorApp
import ParlorRecording
import Testing

/// Issue 38 end to end with the real engine (`RecordingEngineFactory.mediaRecorder`): a member speaks through the
/// forwarding unit, an admin records the room over REST, and the files served back are Ogg Opus that `opusinfo`
/// accepts, the speaker's track and the mix holding its tone.
@Suite(.serialized) struct RecordingAudioTests {
    static let admin = ["Authorization": "Bearer \(recordingAdminToken)"]

    @Test(arguments: RecordingDatabase.allCases) func aSpeakerIsRecordedIntoItsTrackAndTheMix(_ database: RecordingDatabase) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/opusinfo") else {
            Issue.record("opusinfo is missing (Debian's opus-tools; make test installs it)")
            return
        }
        try withRecordingServer(database) { app in
            let harness = try SFUTests.Harness(app)
            let room = try createRoom(app)
            let alice = try harness.join(room, "alice", speaker: true)
            try alice.media.startStreaming(try Self.tonePacket(hertz: 450), level: 30)

            let started = try http(app, "POST", "/rooms/\(room)/recordings", headers: Self.admin)
            #expect(started.status == 201, "\(started.status) \(started.text)")
            let recordingID = try #require(started.object["id"] as? String)
            let on = try alice.socket.next { $0["type"] as? String == "room:recording" }
            #expect((on["body"] as? [String: Any])?["on"] as? Bool == true)
            // The recording's length is wall time of audio: 1.5 s of the speaker's packets.
            Thread.sleep(forTimeInterval: 1.5)
            let stopped = try http(app, "DELETE", "/rooms/\(room)/recordings/\(recordingID)", headers: Self.admin)
            #expect(stopped.status < 300, "\(stopped.status) \(stopped.text)")
            let off = try alice.socket.next { $0["type"] as? String == "room:recording" }
            #expect((off["body"] as? [String: Any])?["on"] as? Bool == false)

            // The row is complete once the engine reported its files (the recorder's thread, then the rooms thread).
            let deadline = Date().addingTimeInterval(10)
            var state: String?
            repeat {
                let list = try http(app, "GET", "/rooms/\(room)/recordings", headers: Self.admin)
                state = list.array.first { $0["id"] as? String == recordingID }?["state"] as? String
                if state != "complete" { Thread.sleep(forTimeInterval: 0.05) }
            } while state != "complete" && Date() < deadline
            #expect(state == "complete")

            let manifest = try http(app, "GET", "/recordings/\(recordingID)/manifest.json", headers: Self.admin)
            let tracks = manifest.object["tracks"] as? [[String: Any]] ?? []
            #expect(tracks.map { $0["member"] as? String } == [alice.member] && tracks.first?["file"] as? String == "track-1.opus")
            let recorded = Double(manifest.object["duration_ms"] as? Int ?? 0) / 1_000
            #expect(recorded > 1.3 && recorded < 3, "\(recorded) s recorded")
            for file in ["track-1.opus", "mix.opus"] {
                let response = try http(app, "GET", "/recordings/\(recordingID)/\(file)", headers: Self.admin)
                #expect(response.status == 200 && response.header("content-type")?.hasPrefix("audio/ogg") == true, "\(file): \(response.status)")
                try Self.expectPlayable(Array(response.body), hertz: 450, file)
            }
            let traversal = try http(app, "GET", "/recordings/\(recordingID)/..%2Fmanifest.json", headers: Self.admin)
            #expect(traversal.status == 400 || traversal.status == 404)
        }
    }

    /// A 20 ms Opus packet of a `hertz` tone that repeats seamlessly (a whole number of periods in 20 ms), encoded after
    /// two frames that settle the encoder.
    static func tonePacket(hertz: Double) throws -> [UInt8] {
        let encoder = try OpusEncoder(channelCount: 1, bitsPerSecond: 48_000)
        let pcm = (0..<960).map { Int16(8_000 * sin(2 * .pi * hertz * Double($0) / 48_000)) }
        _ = try encoder.encode(pcm)
        _ = try encoder.encode(pcm)
        return try encoder.encode(pcm)
    }

    /// `opusinfo` reads the file without a warning, and its decoded audio is dominated by `hertz`.
    static func expectPlayable(_ bytes: [UInt8], hertz: Double, _ what: String) throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("parlor-recorded-\(UUID().uuidString).opus")
        try Data(bytes).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let opusinfo = Process()
        opusinfo.executableURL = URL(filePath: "/usr/bin/opusinfo")
        opusinfo.arguments = [url.path]
        let output = Pipe()
        opusinfo.standardOutput = output
        opusinfo.standardError = output
        try opusinfo.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        opusinfo.waitUntilExit()
        #expect(opusinfo.terminationStatus == 0 && !text.contains("WARNING"), "\(what): \(text)")

        var reader = try OggOpusReader(bytes: bytes)
        let decoder = try OpusDecoder(channelCount: Int(reader.head.channelCount))
        var samples: [Int16] = []
        while let packet = try reader.next() { samples += try decoder.decode(packet.data) }
        // The loudest 0.5 s: the tone's power there against a neighbour 150 Hz away.
        let window = 24_000
        guard samples.count > window else {
            Issue.record("\(what): only \(samples.count) samples")
            return
        }
        var best = 0, bestEnergy = 0.0
        for start in stride(from: 0, to: samples.count - window, by: 4_800) {
            let energy = samples[start..<(start + window)].reduce(0.0) { $0 + Double($1) * Double($1) }
            if energy > bestEnergy { (best, bestEnergy) = (start, energy) }
        }
        let slice = Array(samples[best..<(best + window)])
        let tone = goertzel(slice, hertz), other = goertzel(slice, hertz + 150)
        #expect(tone > 20 * other, "\(what): \(hertz) Hz power \(tone), \(hertz + 150) Hz \(other)")
    }

    static func goertzel(_ samples: [Int16], _ hertz: Double) -> Double {
        let coefficient = 2 * cos(2 * .pi * hertz / 48_000)
        var previous = 0.0, beforePrevious = 0.0
        for sample in samples {
            let current = Double(sample) + coefficient * previous - beforePrevious
            beforePrevious = previous
            previous = current
        }
        return previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
    }
}

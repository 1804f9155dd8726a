import Foundation
import ParlorMediaClient
import Synchronization
import Testing
@testable import ParlorRecording

/// The recorder's own pieces: the RTP parser, the bounded queue, the manifest's JSON, a recording that ends itself.
@Suite struct RoomRecorderTests {
    @Test func theRTPParserFindsTheOpusPayloadPastCSRCsAndExtensionsAndWithoutPadding() throws {
        let payload: [UInt8] = [0xF8, 0xFF, 0xFE]
        // Version 2, padding, an extension, 2 CSRCs; sequence 0x1234, timestamp 0xDEADBEEF, SSRC 0x01020304.
        var packet: [UInt8] = [0xB2, 111, 0x12, 0x34, 0xDE, 0xAD, 0xBE, 0xEF, 1, 2, 3, 4]
        packet += [0, 0, 0, 9, 0, 0, 0, 10]  // CSRCs
        packet += [0xBE, 0xDE, 0x00, 0x01, 0x10, 0x9E, 0x00, 0x00]  // one 32-bit word of extension
        packet += payload + [0, 0, 3]  // 3 bytes of padding
        let parsed = try #require(RTPOpusPacket(parsing: packet))
        #expect(parsed == RTPOpusPacket(sequence: 0x1234, timestamp: 0xDEAD_BEEF, ssrc: 0x0102_0304, payload: payload))
        let plain = try #require(RTPOpusPacket(parsing: [0x80, 111, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3] + payload))
        #expect(plain.payload == payload && plain.sequence == 1 && plain.timestamp == 2 && plain.ssrc == 3)

        #expect(RTPOpusPacket(parsing: Array(packet.prefix(11))) == nil, "shorter than a header")
        #expect(RTPOpusPacket(parsing: [0x40] + packet.dropFirst()) == nil, "version 1")
        #expect(RTPOpusPacket(parsing: Array(packet.prefix(22))) == nil, "cut inside the extension header")
        #expect(RTPOpusPacket(parsing: Array(packet.dropLast()) + [200]) == nil, "more padding than payload")
        #expect(RTPOpusPacket(parsing: Array(packet.dropLast()) + [0]) == nil, "padding of 0")
        var hugeExtension = packet
        hugeExtension[22] = 0xFF
        #expect(RTPOpusPacket(parsing: hugeExtension) == nil, "an extension past the end")
        #expect(RTPOpusPacket(parsing: [0x80, 111, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3]) == nil, "no payload")
    }

    @Test func theQueueIsBoundedAndCountsWhatItDrops() {
        let queue = RecorderQueue(capacity: 3)
        for index in 0..<5 { queue.append(.init(rtp: [UInt8(index)], member: "A", arrival: 0)) }
        #expect(queue.droppedCount == 2)
        let taken = queue.take(waitingUntil: 0)
        #expect(taken.items.map(\.rtp) == [[0], [1], [2]] && taken.stop == nil)
        queue.requestStop(.diskFull)
        queue.requestStop(.requested)
        #expect(!queue.append(.init(rtp: [9], member: "A", arrival: 0)), "taken after the stop")
        let last = queue.take(waitingUntil: .max)  // a stop does not wait for the deadline
        #expect(last.items.isEmpty && last.stop == .diskFull)
    }

    @Test func theManifestsJSONUsesSnakeCaseKeys() throws {
        let manifest = RecordingManifest(recordingID: "r", roomID: "m", node: nil, startedAt: 5, durationMs: 7, state: "complete",
                                         stopReason: .maxDuration, tracks: [.init(member: "A", file: "track-1.opus", offsetMs: 1, durationMs: 6)])
        let text = String(decoding: manifest.encoded(), as: UTF8.self)
        for key in ["\"recording_id\"", "\"room_id\"", "\"started_at\"", "\"duration_ms\"", "\"stop_reason\" : \"max-duration\"", "\"offset_ms\""] {
            #expect(text.contains(key), "\(key) missing in \(text)")
        }
        #expect(try RecordingManifest(decoding: manifest.encoded()) == manifest)
        #expect(throws: (any Error).self) { try RecordingManifest(decoding: Array("{\"recording_id\": 1}".utf8)) }
    }

    @Test func aRecordingStopsItselfAtItsMaximumDuration() throws {
        guard Tools.installed("opusinfo"), Tools.installed("ffmpeg") else { return }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parlor-recording-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let ended = Mutex<[RecordingManifest]>([]), signal = DispatchSemaphore(value: 0)
        let recorder = try RoomRecorder(settings: RecordingSettings(recordingID: "r", roomID: "m", directory: directory.path, maxDuration: .milliseconds(400))) {
            manifest in
            ended.withLock { $0.append(manifest) }
            signal.signal()
        }
        let started = try RecordingManifest(decoding: Array(Data(contentsOf: directory.appendingPathComponent("manifest.json"))))
        #expect(started.state == "recording" && started.tracks.isEmpty && started.stopReason == nil)
        #expect(signal.wait(timeout: .now() + 10) == .success)
        recorder.stop()  // after it stopped by itself: nothing more
        #expect(signal.wait(timeout: .now() + 0.2) == .timedOut)
        let manifest = try #require(ended.withLock { $0.first })
        #expect(ended.withLock { $0.count } == 1)
        #expect(manifest.stopReason == .maxDuration && manifest.state == "complete" && manifest.durationMs == 400)
        _ = try Tools.playsCleanly(directory.appendingPathComponent("mix.opus"), seconds: 0.4)
    }
}


/// The media bench's packets are what a recorder takes for a browser's: one 20 ms Opus frame that libopus decodes.
extension RoomRecorderTests {
    @Test func anAbsurdMaximumDurationIsNoTrap() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parlor-recording-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let reasons = Mutex<[RecordingStopReason?]>([]), signal = DispatchSemaphore(value: 0)
        let recorder = try RoomRecorder(settings: RecordingSettings(recordingID: "r", roomID: "m", directory: directory.path, maxDuration: .seconds(Int64.max))) {
            manifest in
            reasons.withLock { $0.append(manifest.stopReason) }
            signal.signal()
        }
        #expect(signal.wait(timeout: .now() + 0.1) == .timedOut, "stopped by itself")
        recorder.stop()
        #expect(signal.wait(timeout: .now() + 10) == .success)
        #expect(reasons.withLock { $0 } == [.requested])
        #expect(nanoseconds(.seconds(Int64.max)) == .max && nanoseconds(.seconds(Int64.min)) == .min && nanoseconds(.milliseconds(1_500)) == 1_500_000_000)
    }
}

@Suite struct BenchPayloadTests {
    @Test func theMediaBenchsProbePayloadIsOneTwentyMillisecondOpusFrame() throws {
        let payload = ProbePayload(speaker: 3, sequence: 9, sentAt: 123_456_789).encoded(length: 160)
        #expect(Opus.sampleCount(of: payload) == 960)
        #expect(try OpusDecoder(channelCount: 1).decode(payload).count == 960)
        #expect(ProbePayload(payload, in: 0..<payload.count) == ProbePayload(speaker: 3, sequence: 9, sentAt: 123_456_789))
    }
}

/// ENOSPC itself: the second speaker's track is a symbolic link to /dev/full, where every write fails with ENOSPC
/// (the child process test covers EFBIG from a file size limit).
@Suite struct RoomRecorderDiskFullTests {
    @Test func aWriteFailingWithENOSPCStopsTheRecordingWithDiskFullAndTheOtherFilesPlay() throws {
        guard Tools.installed("opusinfo"), Tools.installed("ffmpeg") else { return }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parlor-recording-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createSymbolicLink(atPath: directory.appendingPathComponent("track-2.opus").path, withDestinationPath: "/dev/full")
        let ended = Mutex<RecordingManifest?>(nil), signal = DispatchSemaphore(value: 0)
        let recorder = try RoomRecorder(settings: RecordingSettings(recordingID: "r", roomID: "m", directory: directory.path)) { manifest in
            ended.withLock { $0 = manifest }
            signal.signal()
        }
        // A speaks for 1.6 s; B's first packet then opens B's track, whose first write fails.
        var a = try ToneSource(), b = try ToneSource()
        let rtp = { (packet: (sequence: UInt16, timestamp: UInt32, payload: [UInt8])) in
            [0x80, 111, UInt8(packet.sequence >> 8), UInt8(packet.sequence & 0xFF)] + withUnsafeBytes(of: packet.timestamp.bigEndian, Array.init)
                + [0, 0, 0, 1] + packet.payload
        }
        for step in 0..<80 {
            let due = recorder.startedAt + UInt64(step) * 20_000_000
            while MonotonicTime.now() < due { usleep(1_000) }
            recorder.append(rtp: rtp(try a.next(frequency: 440)), member: "A", arrival: MonotonicTime.now())
        }
        recorder.append(rtp: rtp(try b.next(frequency: 880)), member: "B", arrival: MonotonicTime.now())
        #expect(signal.wait(timeout: .now() + 10) == .success, "the recording did not stop by itself")
        let manifest = try #require(ended.withLock { $0 })
        #expect(manifest.stopReason == .diskFull && manifest.state == "complete")
        #expect(manifest.tracks.map(\.member) == ["A", "B"] && manifest.tracks.last?.durationMs == 0)
        let aTrack = try #require(manifest.tracks.first)
        #expect(aTrack.durationMs >= 900 && manifest.durationMs >= 900, "A's track \(aTrack.durationMs) ms, the mix \(manifest.durationMs) ms")
        let decoded = try Tools.playsCleanly(directory.appendingPathComponent("track-1.opus"), seconds: Double(aTrack.durationMs) / 1_000)
        let tone = Spectrum.window(decoded, from: 0.1, to: Double(aTrack.durationMs) / 1_000 - 0.05)
        #expect(Spectrum.power(tone, at: 440) > 100 * Spectrum.power(tone, at: 880))
        _ = try Tools.playsCleanly(directory.appendingPathComponent("mix.opus"), seconds: Double(manifest.durationMs) / 1_000)
        #expect(try RecordingManifest(decoding: Array(Data(contentsOf: directory.appendingPathComponent("manifest.json")))) == manifest)
    }
}

@Suite struct RoomRecorderStereoTests {
    /// A speaker whose browser sends stereo (SDP stereo=1) gets a stereo track; a mono one a mono track.
    @Test func aStereoSpeakersTrackIsStereo() throws {
        guard Tools.installed("opusinfo"), Tools.installed("ffmpeg") else { return }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parlor-recording-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let signal = DispatchSemaphore(value: 0)
        let recorder = try RoomRecorder(settings: RecordingSettings(recordingID: "r", roomID: "m", directory: directory.path)) { _ in signal.signal() }
        let stereo = try OpusEncoder(channelCount: 2, bitsPerSecond: 64_000), mono = try OpusEncoder(channelCount: 1, bitsPerSecond: 32_000)
        for step in 0..<25 {
            let due = recorder.startedAt + UInt64(step) * 20_000_000
            while MonotonicTime.now() < due { usleep(1_000) }
            let left = (0..<960).map { Int16(8_000 * sin(2 * .pi * 440 * Double(step * 960 + $0) / 48_000)) }
            let header = { (ssrc: UInt8) -> [UInt8] in [0x80, 111, 0, UInt8(step + 1), 0, 0, UInt8((step * 960) >> 8), UInt8((step * 960) & 0xFF), 0, 0, 0, ssrc] }
            recorder.append(rtp: header(1) + (try stereo.encode(left.flatMap { [$0, 0] })), member: "S", arrival: MonotonicTime.now())
            recorder.append(rtp: header(2) + (try mono.encode(left)), member: "M", arrival: MonotonicTime.now())
        }
        recorder.stop()
        #expect(signal.wait(timeout: .now() + 10) == .success)
        for (file, channels) in [("track-1.opus", 2), ("track-2.opus", 1)] {
            let bytes = Array(try Data(contentsOf: directory.appendingPathComponent(file)))
            #expect(try OggOpusReader(bytes: bytes).head.channelCount == UInt8(channels), "\(file)")
            let report = try Tools.run("opusinfo", [directory.appendingPathComponent(file).path])
            let text = String(decoding: report.output, as: UTF8.self)
            #expect(report.status == 0 && text.contains("Channels: \(channels)"), "\(file): \(text)")
        }
    }
}

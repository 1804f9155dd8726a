import Foundation
import ParlorLoop
import ParlorMedia
import ParlorMediaClient
import Synchronization
import Testing
@testable import ParlorRecording

/// A room recorded the way the server will record it: two in-process WebRTC clients (ParlorMediaClient) send libopus
/// tones to a real MediaServer on 127.0.0.1 with two workers; its tap hands every packet to a `RoomRecorder`; the
/// files are read back with opusinfo and ffmpeg (issue 38's tones: A 440 Hz 2 s, silence 1 s, 660 Hz 2 s; B 880 Hz
/// in A's silence).
@Suite struct RoomRecorderMediaTests {
    /// The tap into the recorder; `lossy`: 5 % of each speaker's packets lost and every tenth held back behind the
    /// two after it, as a bad path would deliver them.
    final class RecorderTap: MediaPacketTap {
        let recorder: RoomRecorder
        let lossy: Bool
        private let held = Mutex<[String: [UInt8]]>([:])

        init(recorder: RoomRecorder, lossy: Bool) {
            self.recorder = recorder
            self.lossy = lossy
        }

        func received(rtp: [UInt8], member: String, arrival: UInt64) {
            guard lossy else { return recorder.append(rtp: rtp, member: member, arrival: arrival) }
            let sequence = Int(rtp[2]) << 8 | Int(rtp[3])
            if sequence % 20 == 7 { return }
            if sequence % 10 == 3 { return held.withLock { $0[member] = rtp } }
            recorder.append(rtp: rtp, member: member, arrival: arrival)
            if sequence % 10 == 5, let late = held.withLock({ $0.removeValue(forKey: member) }) {
                recorder.append(rtp: late, member: member, arrival: arrival)
            }
        }
    }

    /// A client's peer, connected through the server's answer.
    static func connect(_ peer: MediaPeer, to server: MediaServer, session: UInt64, member: String, loop: EventLoop) throws {
        let connected = DispatchSemaphore(value: 0)
        let (text, setup) = try server.answer(offer: peer.offer(slots: 1, sends: true), session: session, group: "room", member: member, maySend: true)
        server.open(setup)
        let answer = try MediaAnswer(parsing: text)
        let result: Result<Void, any Error> = loop.submitAndWait {
            peer.connected = { connected.signal() }
            return Result { try peer.connect(to: answer) }
        }
        try result.get()
        #expect(connected.wait(timeout: .now() + 10) == .success, "\(member) did not connect")
    }

    @Test(arguments: [false, true])
    func eachSpeakersTrackAndTheMixHoldTheirTonesAtTheirOffsets(lossy: Bool) throws {
        guard Tools.installed("opusinfo"), Tools.installed("ffmpeg") else { return }
        var configuration = MediaServerConfiguration(bind: TransportAddress(host: "127.0.0.1", port: 0)!, slots: 1)
        configuration.workers = 2
        let server = try MediaServer(configuration: configuration, logger: Logger(level: .off))
        try server.start(events: { _ in })
        defer { server.stop() }
        let loop = try EventLoop(name: "recording-clients")
        loop.start()
        defer {
            loop.stop()
            loop.waitUntilStopped()
        }
        let a = try MediaPeer(loop: loop), b = try MediaPeer(loop: loop)
        server.setSenders(group: "room", members: ["A", "B"])
        try Self.connect(a, to: server, session: 1, member: "A", loop: loop)
        try Self.connect(b, to: server, session: 2, member: "B", loop: loop)
        defer { loop.submitAndWait { a.close(); b.close() } }

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parlor-room-recording-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let ended = Mutex<RecordingManifest?>(nil), endedSignal = DispatchSemaphore(value: 0)
        let settings = RecordingSettings(recordingID: "rec-1", roomID: "room", directory: directory.path, node: "node-1")
        let recorder = try RoomRecorder(settings: settings) { manifest in
            ended.withLock { $0 = manifest }
            endedSignal.signal()
        }
        server.setTap(group: "room", RecorderTap(recorder: recorder, lossy: lossy))

        // The senders' schedule, 20 ms steps from the recorder's start: A from step 15 (0.3 s), B in A's silence.
        var toneA = try ToneSource(), toneB = try ToneSource()
        var firstA: UInt64 = 0, firstB: UInt64 = 0
        for step in 0..<275 {
            let due = recorder.startedAt + UInt64(step) * 20_000_000
            while MonotonicClock.now() < due { usleep(1_000) }
            let index = step - 15
            var sends: [(MediaPeer, [UInt8])] = []
            if (0..<100).contains(index) || (150..<250).contains(index) {
                sends.append((a, try toneA.next(frequency: index < 100 ? 440 : 660).payload))
            }
            if (100..<150).contains(index) { sends.append((b, try toneB.next(frequency: 880).payload)) }
            let pause = index == 100  // DTX: A sends nothing for 1 s, its timestamps jump
            let packets = sends
            let result: Result<Void, any Error> = loop.submitAndWait {
                Result {
                    if pause { a.pauseRTP(samples: 48_000) }
                    for (peer, payload) in packets { try peer.sendRTP(payload, level: 30) }
                }
            }
            try result.get()
            if index == 0 { firstA = MonotonicClock.now() }
            if index == 100 { firstB = MonotonicClock.now() }
        }
        let stoppedAt = MonotonicClock.now()
        recorder.stop()
        #expect(endedSignal.wait(timeout: .now() + 10) == .success, "the recorder did not stop")
        recorder.stop()  // idempotent: onStop is not called again
        #expect(endedSignal.wait(timeout: .now() + 0.2) == .timedOut)
        let manifest = try #require(ended.withLock { $0 })

        let seconds = { (ns: UInt64) in Double(ns) / 1e9 }
        let offsetA = seconds(firstA - recorder.startedAt), offsetB = seconds(firstB - recorder.startedAt)
        let length = seconds(stoppedAt - recorder.startedAt)
        #expect(manifest.state == "complete" && manifest.stopReason == .requested && manifest.node == "node-1")
        #expect(abs(Double(manifest.durationMs) / 1_000 - length) < length / 100, "recorded \(manifest.durationMs) ms of \(length) s")
        #expect(manifest.tracks.map(\.member) == ["A", "B"] && manifest.tracks.map(\.file) == ["track-1.opus", "track-2.opus"])
        #expect(manifest.tracks.count == 2 && abs(Double(manifest.tracks[0].offsetMs) / 1_000 - offsetA) < 0.05)
        #expect(manifest.tracks.count == 2 && abs(Double(manifest.tracks[1].offsetMs) / 1_000 - offsetB) < 0.05)
        #expect(try RecordingManifest(decoding: Array(Data(contentsOf: directory.appendingPathComponent("manifest.json")))) == manifest)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: directory.path)) == ["manifest.json", "mix.opus", "track-1.opus", "track-2.opus"])
        #expect(recorder.droppedPackets == 0)
        guard manifest.tracks.count == 2 else { return }

        for track in manifest.tracks {
            #expect(abs(Double(track.durationMs) / 1_000 - length) < length / 100, "\(track.file): \(track.durationMs) ms")
        }
        let trackA = try Tools.playsCleanly(directory.appendingPathComponent("track-1.opus"), seconds: Double(manifest.tracks[0].durationMs) / 1_000)
        let trackB = try Tools.playsCleanly(directory.appendingPathComponent("track-2.opus"), seconds: Double(manifest.tracks[1].durationMs) / 1_000)
        let mix = try Tools.playsCleanly(directory.appendingPathComponent("mix.opus"), seconds: Double(manifest.durationMs) / 1_000)
        Self.expectTone(trackA, 440, from: offsetA, to: offsetA + 2, "A's track")
        Self.expectTone(trackA, 660, from: offsetA + 3, to: offsetA + 5, "A's track")
        Self.expectQuiet(trackA, from: offsetA + 2, to: offsetA + 3, "A's track")
        Self.expectTone(trackB, 880, from: offsetB, to: offsetB + 1, "B's track")
        Self.expectQuiet(trackB, from: offsetB + 1, to: length, "B's track")
        Self.expectTone(mix, 440, from: offsetA, to: offsetA + 2, "the mix")
        // In the mix one tone follows the other: only the first one's onset is measured against quiet.
        Self.expectTone(mix, 880, from: offsetB, to: offsetB + 1, "the mix", onset: false)
        Self.expectTone(mix, 660, from: offsetA + 3, to: offsetA + 5, "the mix", onset: false)
    }

    /// `frequency` dominates from `start` to `end` (50 ms inside each edge), and with `onset`, nothing is heard just
    /// before `start` (from 70 to 50 ms before): the tone begins where it should, ± 50 ms.
    static func expectTone(_ samples: [Int16], _ frequency: Double, from start: Double, to end: Double, _ what: String, onset checksOnset: Bool = true,
                           sourceLocation: SourceLocation = #_sourceLocation) {
        let inside = Spectrum.window(samples, from: start + 0.05, to: end - 0.05)
        let others = [440.0, 660, 880].filter { $0 != frequency }.map { Spectrum.power(inside, at: $0) }
        #expect(others.allSatisfy { Spectrum.power(inside, at: frequency) > 100 * $0 }, "\(what): \(frequency) Hz from \(start) s", sourceLocation: sourceLocation)
        guard checksOnset else { return }
        let onset = Spectrum.power(Spectrum.window(samples, from: start + 0.03, to: start + 0.05), at: frequency)
        let before = Spectrum.power(Spectrum.window(samples, from: start - 0.07, to: start - 0.05), at: frequency)
        #expect(onset > 100 * before, "\(what): \(frequency) Hz does not begin at \(start) s ± 50 ms", sourceLocation: sourceLocation)
    }

    static func expectQuiet(_ samples: [Int16], from start: Double, to end: Double, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let energy = Spectrum.energy(Spectrum.window(samples, from: start + 0.05, to: end - 0.05))
        #expect(energy < 10_000, "\(what): energy \(energy) from \(start) s to \(end) s", sourceLocation: sourceLocation)
    }
}

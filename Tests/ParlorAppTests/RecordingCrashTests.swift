#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorApp
import ParlorLoop
import Testing

/// Issue 38's `kill -9` test on the whole server: the `parlor serve` binary records a speaker through its forwarding
/// unit and is killed; its files on disk hold the audio up to about the last second, and the next start lists the
/// recording as interrupted and serves the files, closed, playable. (RoomRecorderProcessTests kills a recorder alone
/// and reads the files as killed.)
@Suite struct RecordingCrashTests {
    @Test func aServerKilledWhileRecordingLeavesItsAudioAndTheNextStartSaysInterrupted() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/opusinfo") else {
            Issue.record("opusinfo is missing (Debian's opus-tools; make test installs it)")
            return
        }
        try withTemporaryDirectory { directory in
            let arguments = ["serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", directory, "--database", directory + "/parlor.db"]
            let first = try ExecutableTests.Child(arguments, in: directory)
            defer { if first.process.isRunning { kill(first.process.processIdentifier, SIGKILL) } }
            let port = try ExecutableTests.port(fromListeningLine: try first.readLine())
            let alice = try auth(port: port, name: "alice")
            let bearer = ["Authorization": "Bearer \(alice.jwt)"]
            let created = try RawConnection.oneRequest(port, "POST", "/rooms", json: #"{"display_name":"Panel"}"#, headers: bearer)
            let room = try #require(created.object["id"] as? String)

            let socket = try TestWebSocket(port: port, token: alice.jwt)
            _ = try socket.join(room)
            _ = try socket.call("audio:enable", ["cid": room])
            let loop = try EventLoop(name: "test-media-clients")
            loop.start()
            defer {
                loop.stop()
                loop.waitUntilStopped()
            }
            let media = try MediaTestClient(loop: loop, slots: 1, sends: true)
            defer { media.close() }
            let answer = try socket.call("media:offer", ["cid": room, "sdp": media.offer])
            try media.connect(answer: try #require(answer["sdp"] as? String))
            try media.startStreaming(try RecordingAudioTests.tonePacket(hertz: 450), level: 30)
            let recordingID = try #require(try socket.call("room:record:start", ["cid": room])["recording_id"] as? String)

            // The point is the audio recorded before the kill: 3 s of it, flushed at least once a second.
            Thread.sleep(forTimeInterval: 3)
            #expect(kill(first.process.processIdentifier, SIGKILL) == 0)
            first.process.waitUntilExit()
            #expect(first.process.terminationReason == .uncaughtSignal)
            let files = directory + "/recordings/" + recordingID
            let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: files + "/manifest.json"))) as? [String: Any]
            #expect(manifest?["state"] as? String == "recording", "killed mid-recording: \(manifest ?? [:])")
            #expect((manifest?["tracks"] as? [[String: Any]])?.count == 1)

            let second = try ExecutableTests.Child(arguments, in: directory)
            defer {
                kill(second.process.processIdentifier, SIGTERM)
                _ = second.waitForExit(timeout: 10)
            }
            let restarted = try ExecutableTests.port(fromListeningLine: try second.readLine())
            let listed = try RawConnection.oneRequest(restarted, "GET", "/rooms/\(room)/recordings", headers: bearer)
            let recording = try #require(listed.array.first { $0["id"] as? String == recordingID }, "\(listed.text)")
            #expect(recording["state"] as? String == "interrupted")
            let duration = Double(recording["duration_ms"] as? Int ?? 0) / 1_000
            // Up to the last second of the 3 s: the writers flush a page per second and the jitter window holds 0.1 s.
            #expect(duration >= 1.8 && duration <= 3.5, "\(duration) s kept of 3 s")
            for file in ["track-1.opus", "mix.opus"] {
                let response = try RawConnection.oneRequest(restarted, "GET", "/recordings/\(recordingID)/\(file)", headers: bearer)
                #expect(response.status == 200, "\(file): \(response.status)")
                try RecordingAudioTests.expectPlayable(Array(response.body), hertz: 450, file)
            }
        }
    }
}

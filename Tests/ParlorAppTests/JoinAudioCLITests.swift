#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ParlorRecording

/// `parlor join --play/--record` (issue 39, item 4): real `parlor` processes against a real `parlor serve --dev`,
/// audio through its forwarding unit over UDP. Alice and carol play tones made by libopus (ffmpeg's libopus encoder,
/// 440 and 660 Hz); bob and dave record what they hear; opusinfo must find the files clean, and decoded (libopus) they
/// must hold the tones, not silence, each track only its speaker's.
@Suite struct JoinAudioCLITests {
    typealias Child = ExecutableTests.Child

    @Test func bobHearsAliceAndCarolMixedAndDaveInTracks() throws {
        guard Self.toolsInstalled() else { return }
        try withTemporaryDirectory { directory in
            let (server, url, room) = try Self.serverWithRoom()
            let aliceTone = try Self.makeTone(frequency: 440, seconds: 2, in: directory)
            let carolTone = try Self.makeTone(frequency: 660, seconds: 2, in: directory)
            let bob = try Child(["join", room, "--as", "bob", "--server", url, "--json", "--record", directory + "/bob.ogg"], in: directory)
            let dave = try Child(["join", room, "--as", "dave", "--server", url, "--json", "--record", directory + "/dave.ogg",
                                  "--record-mode", "tracks"], in: directory)
            _ = try Self.line(containing: "\"media:connected\"", from: bob)
            _ = try Self.line(containing: "\"media:connected\"", from: dave)
            let alice = try Child(["join", room, "--as", "alice", "--server", url, "--json", "--play", aliceTone], in: directory)
            let carol = try Child(["join", room, "--as", "carol", "--server", url, "--json", "--play", carolTone], in: directory)
            for speaker in [alice, carol] {
                let connected = try Self.line(containing: "\"media:connected\"", from: speaker)
                #expect(connected.contains("\"sending\":true"), "\(connected)")
                let ended = try Self.line(containing: "\"play:ended\"", from: speaker, timeout: 15)
                let packets = (try JSONSerialization.jsonObject(with: Data(ended.utf8)) as? [String: Any])?["packets"] as? Int
                #expect(packets.map { (100...102).contains($0) } == true, "2 s of 20 ms packets: \(ended)")
            }
            var tracks: [String: String] = [:]
            for _ in 0..<2 {
                let line = try Self.line(containing: "\"record:track\"", from: dave)
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                tracks[object?["name"] as? String ?? "?"] = object?["path"] as? String
            }
            #expect(tracks == ["alice": directory + "/dave-alice.ogg", "carol": directory + "/dave-carol.ogg"])
            // The speakers stay after their files end: the recordings go on until they are stopped.
            #expect(alice.process.isRunning && carol.process.isRunning)
            let everyone = [bob, dave, alice, carol]
            for child in everyone { kill(child.process.processIdentifier, SIGTERM) }
            for child in everyone { #expect(child.waitForExit(timeout: 10) == 0, "stderr: \(child.errorOutput())") }
            for file in ["bob.ogg", "dave-alice.ogg", "dave-carol.ogg"] { try Self.expectOpusinfoClean(directory + "/" + file) }
            // The mix holds both tones at once (each about a quarter of the energy); each track only its speaker's.
            let mixed = try Self.toneSeconds(in: directory + "/bob.ogg", frequencies: [440, 660], share: 0.15)
            #expect(mixed >= 1.4 && mixed <= 2.3, "bob.ogg holds both tones for \(mixed) s")
            for (file, heard, other) in [("dave-alice.ogg", 440.0, 660.0), ("dave-carol.ogg", 660.0, 440.0)] {
                let seconds = try Self.toneSeconds(in: directory + "/" + file, frequencies: [heard], share: 0.4)
                #expect(seconds >= 1.6 && seconds <= 2.3, "\(file) holds \(seconds) s of \(heard) Hz")
                #expect(try Self.toneSeconds(in: directory + "/" + file, frequencies: [other], share: 0.05) == 0, "\(file) holds \(other) Hz")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("dave-") }.sorted()
                    == ["dave-alice.ogg", "dave-carol.ogg"])
            _ = server
        }
    }

    /// --play-loop keeps sending past the file's end; a recording ended by --until's --timeout is complete too.
    @Test func aLoopedClipIsHeardPastItsLengthAndATimeoutFinishesTheFile() throws {
        guard Self.toolsInstalled() else { return }
        try withTemporaryDirectory { directory in
            let (server, url, room) = try Self.serverWithRoom()
            let tone = try Self.makeTone(frequency: 440, seconds: 0.6, in: directory)
            let alice = try Child(["join", room, "--as", "alice", "--server", url, "--json", "--play", tone, "--play-loop"], in: directory)
            _ = try Self.line(containing: "\"media:connected\"", from: alice)
            let bob = try Child(["join", room, "--as", "bob", "--server", url, "--json", "--record", directory + "/bob.ogg",
                                 "--until", "member:left", "--timeout", "3"], in: directory)
            #expect(bob.waitForExit(timeout: 15) == 4, "stderr: \(bob.errorOutput())")
            try Self.expectOpusinfoClean(directory + "/bob.ogg")
            let heard = try Self.toneSeconds(in: directory + "/bob.ogg", frequencies: [440], share: 0.4)
            #expect(heard >= 1.8, "a 0.6 s clip looped for about 3 s: \(heard) s of the tone")
            kill(alice.process.processIdentifier, SIGTERM)
            #expect(alice.waitForExit(timeout: 10) == 0)
            #expect(!alice.remainingOutput().contains("play:ended"), "a looped clip never ends")
            _ = server
        }
    }

    @Test func badFilesAreUsageErrorsBeforeTheJoin() throws {
        try withTemporaryDirectory { directory in
            let (server, url, room) = try Self.serverWithRoom()
            let text = directory + "/notes.txt"
            try Data("not audio at all".utf8).write(to: URL(fileURLWithPath: text))
            let cases: [([String], String)] = [
                (["--play", directory + "/missing.opus"], "cannot read"),
                (["--play", text], "is not an Ogg Opus file"),
                (["--play", directory], "not a regular file"),
                (["--record", directory + "/no/such/folder/bob.ogg"], "cannot write"),
                (["--record", directory + "/no/such/folder/bob.ogg", "--record-mode", "tracks"], "no folder"),
                (["--record", directory + "/bob.ogg", "--record-mode", "loud"], "mixed or tracks"),
                (["--play-loop"], "--play-loop goes with --play"),
                (["--record-mode", "tracks"], "--record-mode goes with --record"),
            ]
            for (extra, message) in cases {
                let result = try CLITests.runCapturingErrors(["join", room, "--as", "bob", "--server", url] + extra)
                #expect(result.status == 2, "\(extra): exit \(result.status), \(result.errors)")
                #expect(result.errors.contains(message), "\(extra): \(result.errors)")
            }
            try CLITests.expectAcceptedOptions(["join": ["--play", "--play-loop", "--record", "--record-mode"]])
            // Nobody joined: the room's history is empty.
            let history = try CLITests.run(["events", room, "--server", url, "--json"])
            #expect(history.status == 0 && !history.output.contains("member:joined"), "\(history.output)")
            _ = server
        }
    }

    // MARK: Helpers

    static func toolsInstalled() -> Bool {
        for tool in ["opusinfo", "ffmpeg"] where !FileManager.default.isExecutableFile(atPath: "/usr/bin/\(tool)") {
            Issue.record("/usr/bin/\(tool) is missing: `make test-deps` installs opus-tools and ffmpeg")
            return false
        }
        return true
    }

    /// `parlor serve --dev` on free ports, and a room made with `parlor rooms create`.
    static func serverWithRoom() throws -> (ServerProcess, String, String) {
        let server = try ServerProcess(["--dev", "--port", "0"])
        let url = "http://127.0.0.1:\(server.port)"
        let created = try CLITests.run(["rooms", "create", "Audio", "--server", url, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(created.output.utf8)) as? [String: Any]
        return (server, url, try #require(object?["id"] as? String))
    }

    /// A mono sine of `frequency` Hz and `seconds`, encoded by libopus into Ogg Opus (20 ms packets).
    static func makeTone(frequency: Int, seconds: Double, in directory: String) throws -> String {
        let path = directory + "/tone-\(frequency).opus"
        let result = try run("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=\(frequency):duration=\(seconds)",
                                                 "-c:a", "libopus", "-b:a", "48k", path])
        #expect(result.status == 0, "ffmpeg: \(result.output)")
        return path
    }

    static func run(_ tool: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    static func expectOpusinfoClean(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let report = try run("/usr/bin/opusinfo", [path])
        #expect(report.status == 0, "opusinfo \(path): \(report.output)", sourceLocation: sourceLocation)
        let lower = report.output.lowercased()
        #expect(!lower.contains("warning") && !lower.contains("error"), "opusinfo \(path): \(report.output)", sourceLocation: sourceLocation)
    }

    /// Seconds of `path` (decoded with libopus) whose 100 ms windows are loud and carry every one of `frequencies`:
    /// each holds at least `share` of the window's energy (a pure tone: 0.5, two mixed equally: 0.25 each).
    static func toneSeconds(in path: String, frequencies: [Double], share: Double) throws -> Double {
        var reader = try OggOpusReader(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        let decoder = try OpusDecoder(channelCount: Int(reader.head.channelCount))
        var samples: [Int16] = []
        for packet in try reader.readAll() {
            let pcm = try decoder.decode(packet.data)
            // Mono: the first channel of each frame.
            samples += stride(from: 0, to: pcm.count, by: decoder.channelCount).map { pcm[$0] }
        }
        let window = 4_800
        var toneWindows = 0
        for start in stride(from: 0, to: samples.count - window, by: window) {
            let slice = samples[start..<(start + window)]
            let energy = slice.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(window)
            // A pure tone of amplitude A has energy A²/2 and Goertzel power A²/4 at its frequency.
            if energy > 1e5, frequencies.allSatisfy({ goertzel(slice, at: $0) > share * energy }) { toneWindows += 1 }
        }
        return Double(toneWindows) * 0.1
    }

    static func goertzel(_ samples: ArraySlice<Int16>, at frequency: Double) -> Double {
        let coefficient = 2 * cos(2 * .pi * frequency / 48_000)
        var previous = 0.0, beforePrevious = 0.0
        for sample in samples {
            let value = Double(sample) + coefficient * previous - beforePrevious
            beforePrevious = previous
            previous = value
        }
        let power = previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
        return power / Double(samples.count * samples.count)
    }

    /// The next stdout line of `child` that contains `text`, within `timeout` seconds overall.
    static func line(containing text: String, from child: Child, timeout: Double = 10) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw TestFailure("no line with \(text) within \(timeout) s") }
            let line = try child.readLine(timeout: remaining)
            if line.contains(text) { return line }
        }
    }
}

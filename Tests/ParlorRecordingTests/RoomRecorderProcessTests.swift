import Foundation
import Testing
@testable import ParlorRecording

/// A recorder in a child process (`ParlorRecordingChild`, two speakers' tones in real time) ended the hard ways:
/// `kill -9`, and a file size limit (RLIMIT_FSIZE, so write(2) fails with EFBIG as it would with ENOSPC).
@Suite struct RoomRecorderProcessTests {
    /// The child built next to this test bundle, else in the package's .build/debug.
    static func childPath() throws -> String {
        var candidates: [String] = []
        for executable in [CommandLine.arguments.first, Bundle.main.executablePath].compactMap({ $0 }) {
            var directory = URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent()
            for _ in 0..<4 {
                candidates.append(directory.appendingPathComponent("ParlorRecordingChild").path)
                directory.deleteLastPathComponent()
            }
        }
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(packageRoot.appendingPathComponent(".build/debug/ParlorRecordingChild").path)
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw RecordingTestFailure("ParlorRecordingChild is not built; run `swift build --build-tests` (looked in \(candidates))")
        }
        return found
    }

    struct Child {
        let process = Process()
        let output = Pipe()

        init(_ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: try RoomRecorderProcessTests.childPath())
            process.arguments = arguments
            process.standardOutput = output
            try process.run()
        }

        /// Blocks until the child printed `line` (or closed its output: then throws).
        func waitForLine(_ line: String) throws {
            var text = ""
            while !text.split(separator: "\n").contains(Substring(line)) {
                let data = output.fileHandleForReading.availableData
                guard !data.isEmpty else { throw RecordingTestFailure("the child ended before printing \(line): \(text)") }
                text += String(decoding: data, as: UTF8.self)
            }
        }
    }

    static func temporaryRoot() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("parlor-recordings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        return root
    }

    @Test func afterKill9EveryFilePlaysToItsLastSecondAndTheRestartClosesItAsInterrupted() throws {
        guard Tools.installed("opusinfo"), Tools.installed("ffmpeg") else { return }
        let root = try Self.temporaryRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("rec-child")
        let child = try Child([directory.path, "60"])
        defer { if child.process.isRunning { kill(child.process.processIdentifier, SIGKILL) } }
        try child.waitForLine("started")
        // The point is the time the recording ran: 2.5 s of it.
        Thread.sleep(forTimeInterval: 2.5)
        kill(child.process.processIdentifier, SIGKILL)
        child.process.waitUntilExit()
        #expect(child.process.terminationReason == .uncaughtSignal)

        let files = ["mix.opus", "track-1.opus", "track-2.opus"]
        for file in files {
            // As killed: whole pages, no end of stream; ffmpeg plays at least 1.5 s, opusinfo warns only of the end.
            let url = directory.appendingPathComponent(file)
            let (decoded, errors) = try Tools.ffmpegDecode(url)
            #expect(errors.isEmpty, "\(file): ffmpeg: \(errors)")
            #expect(decoded.count >= 72_000, "\(file): \(decoded.count) samples after kill -9")
            let report = try Tools.run("opusinfo", [url.path])
            let warnings = (String(decoding: report.output, as: UTF8.self) + report.errors).split(separator: "\n").filter { $0.contains("WARNING") || $0.contains("ERROR") }
            #expect(warnings.count == 1 && warnings.first?.contains("EOS not set") == true, "\(file): \(warnings)")
        }
        let onDisk = try RecordingManifest(decoding: Array(Data(contentsOf: directory.appendingPathComponent("manifest.json"))))
        #expect(onDisk.state == "recording" && onDisk.tracks.map(\.member) == ["A", "B"])

        // The restart: closed as interrupted, durations as far as the files play, and every file now plays cleanly.
        let closed = RoomRecorder.closeInterrupted(under: root.path)
        #expect(closed.count == 1)
        let manifest = try #require(closed.first)
        #expect(manifest.recordingID == "rec-child" && manifest.state == "interrupted" && manifest.stopReason == .interrupted)
        #expect(manifest.durationMs >= 1_500 && manifest.durationMs <= 2_500, "mix: \(manifest.durationMs) ms")
        #expect(manifest.tracks.map(\.member) == ["A", "B"])
        #expect(manifest.tracks.allSatisfy { $0.durationMs >= 1_500 && $0.durationMs <= 2_500 }, "\(manifest.tracks)")
        #expect(try RecordingManifest(decoding: Array(Data(contentsOf: directory.appendingPathComponent("manifest.json")))) == manifest)
        _ = try Tools.playsCleanly(directory.appendingPathComponent("mix.opus"), seconds: Double(manifest.durationMs) / 1_000)
        for track in manifest.tracks {
            let decoded = try Tools.playsCleanly(directory.appendingPathComponent(track.file), seconds: Double(track.durationMs) / 1_000)
            let tone = track.member == "A" ? 440.0 : 880.0
            let start = Double(track.offsetMs) / 1_000 + 0.05
            let window = Spectrum.window(decoded, from: start, to: Double(track.durationMs) / 1_000 - 0.05)
            #expect(Spectrum.power(window, at: tone) > 100 * Spectrum.power(window, at: tone == 440 ? 880 : 440), "\(track.member): \(tone) Hz")
        }
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: directory.path)) == Set(files + ["manifest.json"]))
        #expect(RoomRecorder.closeInterrupted(under: root.path).isEmpty, "closed twice")
    }

    @Test func aFullDiskStopsTheRecordingWithDiskFullAndLeavesEveryFilePlayable() throws {
        guard Tools.installed("opusinfo"), Tools.installed("ffmpeg") else { return }
        let root = try Self.temporaryRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("rec-child")
        let limit = 20_000
        let child = try Child([directory.path, "60", "--file-size-limit", String(limit)])
        defer { if child.process.isRunning { kill(child.process.processIdentifier, SIGKILL) } }
        // The child ends by itself when the recorder stops: the mix (8 KB/s) reaches the limit in about 2.5 s.
        let output = child.output.fileHandleForReading.readDataToEndOfFile()
        child.process.waitUntilExit()
        #expect(child.process.terminationStatus == 0)
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true)
        #expect(lines.first == "started")
        let printed = try RecordingManifest(decoding: Array(lines.dropFirst().joined(separator: "\n").utf8))
        #expect(printed.stopReason == .diskFull && printed.state == "complete")
        #expect(try RecordingManifest(decoding: Array(Data(contentsOf: directory.appendingPathComponent("manifest.json")))) == printed)
        #expect(printed.durationMs >= 1_000, "mix: \(printed.durationMs) ms")
        let mix = directory.appendingPathComponent("mix.opus")
        #expect(try FileManager.default.attributesOfItem(atPath: mix.path)[.size] as? Int ?? .max <= limit)
        _ = try Tools.playsCleanly(mix, seconds: Double(printed.durationMs) / 1_000)
        for track in printed.tracks {
            #expect(track.durationMs >= 1_000, "\(track.file): \(track.durationMs) ms")
            _ = try Tools.playsCleanly(directory.appendingPathComponent(track.file), seconds: Double(track.durationMs) / 1_000)
        }
    }
}

struct RecordingTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

import Foundation
import Testing
@testable import ParlorRecording

/// Real Opus packets from libopus (a sine tone, or silence), numbered as one RTP stream would number them.
struct ToneSource {
    let encoder: OpusEncoder
    var sequence: UInt16
    var timestamp: UInt32
    var phase = 0.0

    init(sequence: UInt16 = 1_000, timestamp: UInt32 = 123_456) throws {
        encoder = try OpusEncoder(channelCount: 1, bitsPerSecond: 48_000)
        self.sequence = sequence
        self.timestamp = timestamp
    }

    /// One 20 ms packet of `frequency` Hz (0: silence) at `amplitude`; sequence and timestamp advance.
    mutating func next(frequency: Double, amplitude: Double = 8_000) throws -> (sequence: UInt16, timestamp: UInt32, payload: [UInt8]) {
        var pcm = [Int16](repeating: 0, count: 960)
        for index in pcm.indices {
            pcm[index] = Int16(amplitude * sin(phase))
            phase += 2 * .pi * frequency / 48_000
        }
        let packet = (sequence, timestamp, try encoder.encode(pcm))
        sequence &+= 1
        timestamp &+= 960
        return packet
    }
}

enum Tools {
    /// Runs a Debian tool (opusinfo from opus-tools, ffmpeg); returns its exit status, stdout and stderr.
    static func run(_ tool: String, _ arguments: [String]) throws -> (status: Int32, output: Data, errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/\(tool)")
        process.arguments = arguments
        // stderr goes to a file: a tool that fills one pipe while we block reading the other would never finish.
        let errorsURL = FileManager.default.temporaryDirectory.appendingPathComponent("parlor-tool-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: errorsURL.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errorsURL) }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: errorsURL)
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let errorData = (try? Data(contentsOf: errorsURL)) ?? Data()
        return (process.terminationStatus, data, String(decoding: errorData, as: UTF8.self))
    }

    static func installed(_ tool: String) -> Bool {
        let present = FileManager.default.isExecutableFile(atPath: "/usr/bin/\(tool)")
        if !present {
            Issue.record("/usr/bin/\(tool) is missing: `make test-deps` installs opus-tools and ffmpeg (TEST_APT_PACKAGES)")
        }
        return present
    }

    static func temporaryFile(_ bytes: [UInt8], name: String = "track.opus") throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parlor-recording-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url
    }

    static func remove(_ url: URL) { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }

    /// opusinfo's report; fails the test on a warning or error, returns the playback length in seconds.
    /// `opusinfo` reports `seconds` (± 5 ms) and `ffmpeg` decodes that many samples (± 1 ms) without a word: the
    /// decoded 48 kHz samples. Failures are reported at the caller.
    static func playsCleanly(_ url: URL, seconds: Double, sourceLocation: SourceLocation = #_sourceLocation) throws -> [Int16] {
        let length = try opusinfoPlaybackLength(of: url)
        #expect(length.map { abs($0 - seconds) < 0.005 } == true, "opusinfo says \(String(describing: length)) s", sourceLocation: sourceLocation)
        let (decoded, errors) = try ffmpegDecode(url)
        #expect(errors.isEmpty, "ffmpeg: \(errors)", sourceLocation: sourceLocation)
        let expected = Int((seconds * 48_000).rounded())
        #expect(abs(decoded.count - expected) <= 48, "ffmpeg decoded \(decoded.count) samples", sourceLocation: sourceLocation)
        return decoded
    }

    static func opusinfoPlaybackLength(of url: URL) throws -> Double? {
        let result = try run("opusinfo", [url.path])
        let text = String(decoding: result.output, as: UTF8.self) + result.errors
        #expect(result.status == 0, "opusinfo exit \(result.status):\n\(text)")
        #expect(!text.localizedCaseInsensitiveContains("warning") && !text.localizedCaseInsensitiveContains("error"), "opusinfo:\n\(text)")
        // "Playback length: 0m:05.020s"
        guard let line = text.split(separator: "\n").first(where: { $0.contains("Playback length:") }),
              let value = line.split(separator: ":", maxSplits: 1).last else { return nil }
        let parts = value.trimmingCharacters(in: .whitespaces).dropLast().split(separator: "m:")
        guard parts.count == 2, let minutes = Double(parts[0]), let seconds = Double(parts[1]) else { return nil }
        return minutes * 60 + seconds
    }

    /// ffmpeg's decoding to 48 kHz mono 16-bit samples.
    static func ffmpegDecode(_ url: URL) throws -> (samples: [Int16], errors: String) {
        let result = try run("ffmpeg", ["-nostdin", "-v", "error", "-i", url.path, "-f", "s16le", "-ac", "1", "-ar", "48000", "-"])
        #expect(result.status == 0, "ffmpeg exit \(result.status): \(result.errors)")
        let samples = result.output.withUnsafeBytes { raw in Array(raw.bindMemory(to: Int16.self)) }
        return (samples, result.errors)
    }
}

enum Spectrum {
    /// Power at `frequency` over `samples` (Goertzel), normalized by length.
    static func power(_ samples: ArraySlice<Int16>, at frequency: Double) -> Double {
        let coefficient = 2 * cos(2 * .pi * frequency / 48_000)
        var previous = 0.0, beforePrevious = 0.0
        for sample in samples {
            let value = Double(sample) + coefficient * previous - beforePrevious
            beforePrevious = previous
            previous = value
        }
        let power = previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
        return power / Double(max(samples.count, 1) * max(samples.count, 1))
    }

    static func energy(_ samples: ArraySlice<Int16>) -> Double {
        samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(samples.count, 1))
    }

    /// The slice of `seconds` at 48 kHz, clamped to the samples.
    static func window(_ samples: [Int16], from start: Double, to end: Double) -> ArraySlice<Int16> {
        let lower = min(samples.count, Int(start * 48_000)), upper = min(samples.count, Int(end * 48_000))
        return samples[lower..<upper]
    }
}

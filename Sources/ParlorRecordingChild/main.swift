// A recorder in a process of its own, for the tests that kill it (`kill -9`) or fill its disk (RLIMIT_FSIZE), and a
// quick look at what recording costs:
//   ParlorRecordingChild <directory> <seconds> [--file-size-limit BYTES] [--speakers N] [--report-cpu]
// records N speakers A, B, … (default 2, at most 26) sending libopus tones in real time (A 440 Hz from the start, the others from
// 0.5 s at 880, 1320, … Hz), prints "started" once the recorder runs, and when it stops (after `seconds`, or by
// itself) prints the final manifest's JSON and exits 0. `--report-cpu` also prints, on stderr, the recorder
// threads' CPU (the tracks' `parlor-record`, the mix's `parlor-mix`) as shares of one core over the recording; the tones are encoded on the main
// thread, which that share leaves out.
import Foundation
import ParlorRecording

var positional: [String] = []
var fileSizeLimit: UInt?
var speakerCount = 2
var reportCPU = false
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--file-size-limit": fileSizeLimit = arguments.next().flatMap { UInt($0) }
    case "--speakers": speakerCount = arguments.next().flatMap { Int($0) } ?? 0
    case "--report-cpu": reportCPU = true
    default: positional.append(argument)
    }
}
guard positional.count == 2, let seconds = Double(positional[1]), (1...26).contains(speakerCount) else {
    FileHandle.standardError.write(Data("usage: ParlorRecordingChild <directory> <seconds> [--file-size-limit BYTES] [--speakers 1…26] [--report-cpu]\n".utf8))
    exit(2)
}
if let limit = fileSizeLimit {
    // Beyond the limit write(2) fails with EFBIG instead of the process being killed by SIGXFSZ.
    signal(SIGXFSZ, SIG_IGN)
    var bound = rlimit(rlim_cur: rlim_t(limit), rlim_max: rlim_t(limit))
    guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &bound) == 0 else { exit(3) }
}

/// CPU seconds (utime + stime) of this process's thread named `name`, from /proc.
func threadCPU(named name: String) -> Double? {
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? [] {
        guard let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
              comm.trimmingCharacters(in: .whitespacesAndNewlines) == name,
              let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { continue }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { continue }
        return (user + system) / ticks
    }
    return nil
}

func monotonicNow() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// One speaker's RTP packets: libopus-encoded 20 ms of a tone, with a one-byte header extension as browsers send.
struct Speaker {
    let encoder: OpusEncoder
    let frequency: Double
    var sequence: UInt16 = 1
    var timestamp: UInt32 = 1_000
    var phase = 0.0

    mutating func next() throws -> [UInt8] {
        var pcm = [Int16](repeating: 0, count: 960)
        for index in pcm.indices {
            pcm[index] = Int16(8_000 * sin(phase))
            phase += 2 * .pi * frequency / 48_000
        }
        var packet: [UInt8] = [0x90, 111, UInt8(sequence >> 8), UInt8(sequence & 0xFF)]
        packet += withUnsafeBytes(of: timestamp.bigEndian, Array.init) + [0, 0, 0x12, 0x34]
        packet += [0xBE, 0xDE, 0x00, 0x01, 0x10, 0x9E, 0x00, 0x00]
        packet += try encoder.encode(pcm)
        sequence &+= 1
        timestamp &+= 960
        return packet
    }
}

let stopped = DispatchSemaphore(value: 0)
let settings = RecordingSettings(recordingID: "rec-child", roomID: "room-child", directory: positional[0], node: "child")
let recorder = try RoomRecorder(settings: settings) { manifest in
    FileHandle.standardOutput.write(Data(manifest.encoded()) + Data("\n".utf8))
    stopped.signal()
}
FileHandle.standardOutput.write(Data("started\n".utf8))
var speakers = try (0..<speakerCount).map { index in
    Speaker(encoder: try OpusEncoder(channelCount: 1, bitsPerSecond: 48_000), frequency: 440 * Double(index + 1))
}
let start = monotonicNow()
var step: UInt64 = 0
while true {
    let due = start + step * 20_000_000
    while monotonicNow() < due { usleep(2_000) }
    if Double(due - start) / 1e9 >= seconds { break }
    for index in speakers.indices where index == 0 || step >= 25 {
        recorder.append(rtp: try speakers[index].next(), member: String(UnicodeScalar(UInt8(65 + index))), arrival: monotonicNow())
    }
    step += 1
    if stopped.wait(timeout: .now()) == .success {
        stopped.signal()
        break
    }
}
if reportCPU, let tracks = threadCPU(named: "parlor-record"), let mix = threadCPU(named: "parlor-mix") {
    let elapsed = Double(monotonicNow() - start) / 1e9
    FileHandle.standardError.write(Data(String(format: "recorder threads: tracks %.3f core, mix %.3f core (%.2f + %.2f s of CPU in %.1f s, %d speakers)\n",
                                               tracks / elapsed, mix / elapsed, tracks, mix, elapsed, speakerCount).utf8))
}
recorder.stop()
stopped.wait()
exit(0)

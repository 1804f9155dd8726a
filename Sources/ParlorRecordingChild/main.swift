// A recorder in a process of its own, for the tests that kill it (`kill -9`) or fill its disk (RLIMIT_FSIZE):
// `ParlorRecordingChild <directory> <seconds> [<file size limit in bytes>]` records two speakers sending libopus
// tones in real time (A 440 Hz, B 880 Hz from 0.5 s), prints "started" once the recorder runs, and when it stops
// (after `seconds`, or by itself) prints the final manifest's JSON and exits 0.
import Foundation
import ParlorRecording

let arguments = CommandLine.arguments
guard arguments.count >= 3, let seconds = Double(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: ParlorRecordingChild <directory> <seconds> [<file size limit>]\n".utf8))
    exit(2)
}
if arguments.count >= 4, let limit = UInt(arguments[3]) {
    // Beyond the limit write(2) fails with EFBIG instead of the process being killed by SIGXFSZ.
    signal(SIGXFSZ, SIG_IGN)
    var bound = rlimit(rlim_cur: rlim_t(limit), rlim_max: rlim_t(limit))
    guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &bound) == 0 else { exit(3) }
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
let settings = RecordingSettings(recordingID: "rec-child", roomID: "room-child", directory: arguments[1], node: "child")
let recorder = try RoomRecorder(settings: settings) { manifest in
    FileHandle.standardOutput.write(Data(manifest.encoded()) + Data("\n".utf8))
    stopped.signal()
}
FileHandle.standardOutput.write(Data("started\n".utf8))
var a = Speaker(encoder: try OpusEncoder(channelCount: 1, bitsPerSecond: 48_000), frequency: 440)
var b = Speaker(encoder: try OpusEncoder(channelCount: 1, bitsPerSecond: 48_000), frequency: 880)
let start = monotonicNow()
var step: UInt64 = 0
while true {
    let due = start + step * 20_000_000
    while monotonicNow() < due { usleep(2_000) }
    if Double(due - start) / 1e9 >= seconds { break }
    recorder.append(rtp: try a.next(), member: "A", arrival: monotonicNow())
    if step >= 25 { recorder.append(rtp: try b.next(), member: "B", arrival: monotonicNow()) }
    step += 1
    if stopped.wait(timeout: .now()) == .success {
        stopped.signal()
        break
    }
}
recorder.stop()
stopped.wait()
exit(0)

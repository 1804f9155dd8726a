#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// CPU time from /proc: the server process, each of its threads, this process, and the whole machine's busy time
/// (to tell how much other work ran during a window). The server's threads carry no names of their own (every one
/// is "parlor" in /proc), so the media thread is found as the busiest thread of a window: the only one with work
/// per packet (the loops and the rooms thread only answer pings there).
struct CPUSample {
    let at: UInt64
    /// Seconds of CPU (utime + stime) of the server process, of each of its threads (by thread id), of this
    /// generator, and busy seconds of the machine (all cores).
    let server: Double
    let threads: [String: Double]
    let generator: Double
    let machineBusy: Double

    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    static func take(serverPID: Int32) -> CPUSample {
        var threads: [String: Double] = [:]
        for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(serverPID)/task")) ?? [] {
            threads[task] = ticks("/proc/\(serverPID)/task/\(task)/stat").map { $0 / ticksPerSecond }
        }
        return CPUSample(at: DispatchTime.now().uptimeNanoseconds, server: (ticks("/proc/\(serverPID)/stat") ?? 0) / ticksPerSecond,
                         threads: threads, generator: (ticks("/proc/self/stat") ?? 0) / ticksPerSecond,
                         machineBusy: machineBusyTicks() / ticksPerSecond)
    }

    /// utime + stime (fields 14 and 15) of a /proc stat file, in clock ticks; the command name may hold spaces, so
    /// fields are counted after its closing parenthesis.
    static func ticks(_ path: String) -> Double? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8), let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After ")": state is field 3, so utime (14) and stime (15) are at offsets 11 and 12.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return user + system
    }

    /// CPU seconds of the busiest server thread between two samples (nil when no thread is in both).
    static func busiestThread(_ before: CPUSample, _ after: CPUSample) -> Double? {
        after.threads.compactMap { id, end in before.threads[id].map { end - $0 } }.max()
    }

    /// Busy ticks of all cores from /proc/stat's "cpu" line (everything but idle and iowait).
    static func machineBusyTicks() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") }) else { return 0 }
        let values = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard values.count >= 5 else { return 0 }
        return values.prefix(8).reduce(0, +) - values[3] - values[4]
    }
}

/// CPU seconds of the calling thread (CLOCK_THREAD_CPUTIME_ID): what the floor probes time.
func threadCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// CPU time from /proc: the server process, each of its threads, this process, and the whole machine's busy time
/// (to tell how much other work ran during a window). Parlor names its media workers' threads `parlor-media`,
/// `parlor-media-1`, …: their sum is the media CPU. A server without such names (Janus) falls back to the busiest
/// thread of the window.
struct CPUSample {
    let at: UInt64
    /// Seconds of CPU (utime + stime) of the server process, of each of its threads (by thread id), of this
    /// generator, and busy seconds of the machine (all cores).
    let server: Double
    let threads: [String: Double]
    /// Seconds each thread ran by /proc/…/task/…/schedstat (nanoseconds, not clock ticks: a window's few
    /// milliseconds of media-link work show).
    let runtimes: [String: Double]
    /// The thread ids whose name (/proc/…/comm) starts with "parlor-media".
    let mediaThreads: Set<String>
    /// The thread ids named "parlor-record": a recording's tracks' thread (`RoomRecorder`), one per recording (its mix
    /// has its own, `parlor-mix`: see `threads(named:)`).
    let recorderThreads: Set<String>
    /// Each thread's name (/proc/…/comm), by thread id.
    let names: [String: String]
    let generator: Double
    let machineBusy: Double

    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    static func take(serverPID: Int32) -> CPUSample {
        var threads: [String: Double] = [:], runtimes: [String: Double] = [:]
        var mediaThreads: Set<String> = [], recorderThreads: Set<String> = []
        var names: [String: String] = [:]
        for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(serverPID)/task")) ?? [] {
            threads[task] = ticks("/proc/\(serverPID)/task/\(task)/stat").map { $0 / ticksPerSecond }
            runtimes[task] = runtime("/proc/\(serverPID)/task/\(task)/schedstat")
            let name = (try? String(contentsOfFile: "/proc/\(serverPID)/task/\(task)/comm", encoding: .utf8)) ?? ""
            if name.hasPrefix("parlor-media") { mediaThreads.insert(task) }
            if name.hasPrefix("parlor-record") { recorderThreads.insert(task) }
            names[task] = name.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return CPUSample(at: DispatchTime.now().uptimeNanoseconds, server: (ticks("/proc/\(serverPID)/stat") ?? 0) / ticksPerSecond,
                         threads: threads, runtimes: runtimes, mediaThreads: mediaThreads, recorderThreads: recorderThreads, names: names, generator: (ticks("/proc/self/stat") ?? 0) / ticksPerSecond,
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

    /// The first field of a schedstat file (nanoseconds on a CPU), in seconds.
    static func runtime(_ path: String) -> Double? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8), let first = text.split(separator: " ").first,
              let nanoseconds = Double(first) else { return nil }
        return nanoseconds / 1e9
    }

    /// Seconds the threads in both samples ran between them by schedstat: all of them, and those named parlor-media*
    /// (the media workers, and on a cluster node the media link's threads, "parlor-media-li…").
    static func runtime(_ before: CPUSample, _ after: CPUSample) -> (all: Double, media: Double) {
        let spent = after.runtimes.compactMap { id, end in before.runtimes[id].map { (id, end - $0) } }
        return (spent.map(\.1).reduce(0, +), spent.filter { after.mediaThreads.contains($0.0) }.map(\.1).reduce(0, +))
    }

    /// CPU seconds of the media threads between two samples: all `parlor-media*` threads together, or the busiest
    /// thread when none carries that name (nil when no thread is in both samples).
    static func mediaThreads(_ before: CPUSample, _ after: CPUSample) -> Double? {
        let spent = after.threads.compactMap { id, end in before.threads[id].map { (id, end - $0) } }
        let named = spent.filter { after.mediaThreads.contains($0.0) }
        return named.isEmpty ? spent.map(\.1).max() : named.map(\.1).reduce(0, +)
    }

    /// CPU seconds of the recordings' threads between two samples, apart from the media threads; nil when none ran
    /// in both (no recording).
    static func recorderThreads(_ before: CPUSample, _ after: CPUSample) -> Double? {
        let spent = after.recorderThreads.compactMap { id in before.threads[id].flatMap { start in after.threads[id].map { $0 - start } } }
        return spent.isEmpty ? nil : spent.reduce(0, +)
    }

    /// CPU seconds between two samples of the server's threads whose name starts with `prefix`; nil when none ran
    /// in both.
    static func threads(named prefix: String, _ before: CPUSample, _ after: CPUSample) -> Double? {
        let spent = after.names.filter { $0.value.hasPrefix(prefix) }.keys
            .compactMap { id in before.threads[id].flatMap { start in after.threads[id].map { $0 - start } } }
        return spent.isEmpty ? nil : spent.reduce(0, +)
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

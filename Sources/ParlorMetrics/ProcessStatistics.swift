#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// What /proc says about this process: CPU time, resident memory, open descriptors and start time.
/// Fields that cannot be read (not Linux) are nil and left out of the exposition.
struct ProcessStatistics {
    var cpuSeconds: Double?
    var residentBytes: Int?
    var openDescriptors: Int?
    var startTimeSeconds: Double?

    static func current() -> ProcessStatistics {
        var statistics = ProcessStatistics()
        #if os(Linux)
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        let pageSize = sysconf(Int32(_SC_PAGESIZE))
        // /proc/self/stat: the command name (field 2) may hold spaces, so count fields after its closing ')'.
        if let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
           let close = stat.lastIndex(of: ")") {
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            // After ')': state is field 3, so field n is at index n - 3 (utime 14, stime 15, starttime 22, rss 24).
            if fields.count > 21, let user = Double(fields[11]), let system = Double(fields[12]) {
                statistics.cpuSeconds = (user + system) / ticksPerSecond
                if let start = Double(fields[19]), let bootTime = bootTimeSeconds() {
                    statistics.startTimeSeconds = bootTime + start / ticksPerSecond
                }
                if let pages = Int(fields[21]) { statistics.residentBytes = pages * pageSize }
            }
        }
        if let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            statistics.openDescriptors = max(0, entries.count - 1)  // less the descriptor listing the directory
        }
        #endif
        return statistics
    }

    /// `btime` from /proc/stat: when the system booted, in seconds since the epoch.
    private static func bootTimeSeconds() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        for line in stat.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst(6).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }
}

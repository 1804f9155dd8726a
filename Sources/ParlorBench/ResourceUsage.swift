#if canImport(Glibc)
import Glibc
#endif

// CPU and memory readings for the report: /proc for the server and the machine, getrusage for this process.

/// CPU and memory of a process, from /proc.
struct ProcessSample {
    var cpuSeconds: Double
    var rssKiB: Int
    var peakRSSKiB: Int
    var threads: Int

    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// Reads /proc/<pid>/stat (utime + stime, fields 14 and 15) and /proc/<pid>/status (VmRSS, VmHWM).
    static func read(pid: Int32) -> ProcessSample? {
        guard let stat = readFile("/proc/\(pid)/stat"), let status = readFile("/proc/\(pid)/status") else { return nil }
        // The command name may hold spaces; fields are counted after its closing parenthesis.
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state); utime is field 14 → index 11, stime field 15 → index 12, threads field 20 → 17.
        guard fields.count > 17, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        var sample = ProcessSample(cpuSeconds: (user + system) / ticksPerSecond, rssKiB: 0, peakRSSKiB: 0, threads: Int(fields[17]) ?? 0)
        for line in status.split(separator: "\n") {
            if line.hasPrefix("VmRSS:") { sample.rssKiB = kibibytes(line) }
            if line.hasPrefix("VmHWM:") { sample.peakRSSKiB = kibibytes(line) }
        }
        return sample
    }

    private static func kibibytes(_ line: Substring) -> Int {
        Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    static func readFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, 4096) }
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// This process's own CPU time (all threads), from getrusage.
func ownCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
    let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    return user + system
}

func ownPeakRSSKiB() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Int(usage.ru_maxrss)
}

/// CPU seconds of the whole machine (all cores), from the first line of /proc/stat: `busy` is this machine's own
/// work, everything but idle, iowait and steal; `steal` is the time the hypervisor gave this machine's virtual CPUs
/// to others while they had work (on a shared host, the noise no process here can see).
struct MachineSample {
    var busy: Double
    var steal: Double

    static func read() -> MachineSample {
        guard let stat = ProcessSample.readFile("/proc/stat"), let line = stat.split(separator: "\n").first else {
            return MachineSample(busy: 0, steal: 0)
        }
        let fields = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard fields.count >= 8 else { return MachineSample(busy: 0, steal: 0) }
        // user nice system idle iowait irq softirq steal
        let busy = fields[0] + fields[1] + fields[2] + fields[5] + fields[6]
        return MachineSample(busy: busy / ProcessSample.ticksPerSecond, steal: fields[7] / ProcessSample.ticksPerSecond)
    }

    static func - (after: MachineSample, before: MachineSample) -> MachineSample {
        MachineSample(busy: after.busy - before.busy, steal: after.steal - before.steal)
    }
}

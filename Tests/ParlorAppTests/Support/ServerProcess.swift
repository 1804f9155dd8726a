#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The release-shaped `parlor serve` binary as an attacker meets it: a child process on 127.0.0.1 with an in-memory
/// database, and its memory and CPU read from /proc, so attack tests can bound what one client costs the server.
final class ServerProcess {
    let child: ExecutableTests.Child
    let port: Int
    private let directory: String

    /// Starts `parlor serve --host 127.0.0.1 --port 0 --database :memory:` plus `arguments`, in a temporary directory.
    /// `prefix` runs the binary under another command (e.g. `["prlimit", "--nofile=256", "--"]`).
    init(_ arguments: [String] = [], prefix: [String] = []) throws {
        directory = NSTemporaryDirectory() + "parlor-attack-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let serve = ["serve", "--host", "127.0.0.1", "--port", "0", "--database", ":memory:"] + arguments
        child = try ExecutableTests.Child(serve, in: directory, prefix: prefix)
        port = try ExecutableTests.port(fromListeningLine: try child.readLine())
    }

    deinit {
        if child.process.isRunning {
            kill(child.process.processIdentifier, SIGKILL)
            _ = child.waitForExit(timeout: 5)
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    var pid: Int32 { child.process.processIdentifier }

    /// Resident memory in bytes (VmRSS of /proc/PID/status).
    func residentBytes() throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else {
            throw TestFailure("no VmRSS in /proc/\(pid)/status")
        }
        return kilobytes * 1024
    }

    /// User plus system CPU seconds the process has used (utime + stime of /proc/PID/stat).
    func cpuSeconds() throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // The command name is in parentheses and may hold spaces: count fields after the last ')'.
        guard let close = stat.lastIndex(of: ")") else { throw TestFailure("unreadable /proc/\(pid)/stat") }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After ')': state is field 3 of stat(5), so utime (14) and stime (15) are at offsets 11 and 12.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw TestFailure("unreadable /proc/\(pid)/stat")
        }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Open descriptors of the process (entries of /proc/PID/fd).
    func openDescriptorCount() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
    }

    /// Polls `condition` every 20 ms until it holds or `timeout` seconds pass (for effects with no event to await,
    /// such as memory being returned to the system).
    func eventually(timeout: Double = 10, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try condition() { return true }
            usleep(20_000)
        }
        return try condition()
    }

    static let mebibyte = 1024 * 1024

    /// False under `make asan`/`make tsan`: a sanitizer's allocator keeps freed memory in quarantine and adds shadow
    /// memory, so RSS bounds say nothing there (the attacks still run and every other expectation holds).
    static let checksMemory = ProcessInfo.processInfo.environment["PARLOR_SANITIZER"] == nil
}

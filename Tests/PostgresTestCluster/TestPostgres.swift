#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorPostgres
import Synchronization

/// A private PostgreSQL cluster for the test run: Debian's binaries (`initdb`, `pg_ctl` under
/// /usr/lib/postgresql/*/bin), a data directory in a fresh temporary directory, a free loopback port, and no
/// durability (fsync off: nothing must survive the run). Started once per test process, on first use, and removed
/// when the process exits. As root (CI) it runs as the `postgres` user, since PostgreSQL refuses to run as root.
/// A test that stops or restarts PostgreSQL gets a cluster of its own (`makePrivate`), as the shared one serves the
/// tests running beside it.
public final class TestPostgres: Sendable {
    public let port: Int
    /// The temporary directory: data, log and the Unix socket.
    public let directory: String
    let binDirectory: String
    let runAs: String?
    /// The server's options (port, socket directory, no durability), given again at every start.
    private let serverOptions: String
    private let counter = Counter()

    /// The process's cluster, started on first use; throws (in every test that asks) if it could not start.
    public static func shared() throws -> TestPostgres {
        try started.get()
    }

    /// A separate cluster for one test, which may stop and start it: call `remove()` when done (a `defer`), which
    /// stops it and deletes its directory. Starting one takes a few seconds (initdb).
    public static func makePrivate() throws -> TestPostgres {
        try TestPostgres()
    }

    /// Stops the server (`pg_ctl stop -m mode`: "fast" ends every session and rolls back open transactions).
    public func stop(mode: String = "fast") throws {
        try pgCtl(["-m", mode, "-w", "stop"])
    }

    /// Starts the stopped server again, on the same port and directory; returns once it accepts connections.
    public func start() throws {
        try pgCtl(["-o", serverOptions, "-l", directory + "/log", "-w", "start"])
    }

    /// Stops a private cluster for good and deletes its directory.
    public func remove() {
        try? pgCtl(["-m", "immediate", "stop"])
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A new, empty database on the cluster (no migrations applied): one per test keeps tests independent.
    public func makeDatabase() throws -> PostgresURL {
        let name = "parlor_test_\(getpid())_\(counter.next())"
        let admin = try PostgresConnection(url: try url(database: "postgres"))
        defer { admin.close() }
        try admin.execute("CREATE DATABASE \(name)")
        return try url(database: name)
    }

    public func url(database: String) throws -> PostgresURL {
        try PostgresURL("postgres://parlor@127.0.0.1:\(port)/\(database)")
    }

    /// Runs `pg_ctl` with `arguments` (as the cluster's user) and waits; throws with its output if it fails.
    public func pgCtl(_ arguments: [String]) throws {
        try Self.run(binDirectory + "/pg_ctl", ["-D", directory + "/data"] + arguments, as: runAs)
    }

    private static let started: Result<TestPostgres, any Error> = Result {
        let cluster = try TestPostgres()
        stopAtExit = (cluster.binDirectory, cluster.directory, cluster.runAs)
        atexit {
            guard let (bin, directory, runAs) = TestPostgres.stopAtExit else { return }
            try? TestPostgres.run(bin + "/pg_ctl", ["-D", directory + "/data", "-m", "immediate", "stop"], as: runAs)
            try? FileManager.default.removeItem(atPath: directory)
        }
        return cluster
    }

    // Written once, before atexit is registered, and read only by the exit handler.
    nonisolated(unsafe) private static var stopAtExit: (String, String, String?)?

    private init() throws {
        binDirectory = try Self.findBinaries()
        runAs = getuid() == 0 ? "postgres" : nil
        var template = Array((NSTemporaryDirectory() + "/parlor-pg-XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else { throw ClusterError("mkdtemp failed: \(String(cString: strerror(errno)))") }
        directory = String(cString: created)
        do {
            if let runAs {
                guard let user = getpwnam(runAs) else {
                    throw ClusterError("running as root needs the \(runAs) user (Debian's postgresql package creates it)")
                }
                guard chown(directory, user.pointee.pw_uid, user.pointee.pw_gid) == 0 else {
                    throw ClusterError("chown \(directory): \(String(cString: strerror(errno)))")
                }
            }
            try Self.run(binDirectory + "/initdb", ["-D", directory + "/data", "-A", "trust", "-U", "parlor", "-E", "UTF8",
                                                    "--locale=C", "--no-sync"], as: runAs)
            (port, serverOptions) = try Self.start(binDirectory: binDirectory, directory: directory, runAs: runAs)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    /// Starts the server on a port the kernel just said was free; tries another if someone took it meanwhile.
    /// Returns the port and the options it was started with.
    private static func start(binDirectory: String, directory: String, runAs: String?) throws -> (port: Int, options: String) {
        var lastError: any Error = ClusterError("no attempt")
        for _ in 0..<3 {
            let port = try freePort()
            let options = "-p \(port) -c listen_addresses=127.0.0.1 -k \(directory) -c fsync=off -c synchronous_commit=off "
                + "-c full_page_writes=off -c max_connections=300"
            do {
                try run(binDirectory + "/pg_ctl", ["-D", directory + "/data", "-o", options, "-l", directory + "/log", "-w", "start"],
                        as: runAs)
                return (port, options)
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    private static func findBinaries() throws -> String {
        if let configured = ProcessInfo.processInfo.environment["PARLOR_PG_BIN"] { return configured }
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap(Int.init).sorted(by: >)
        guard let version = versions.first(where: { FileManager.default.isExecutableFile(atPath: "\(root)/\($0)/bin/initdb") }) else {
            throw ClusterError("no PostgreSQL under \(root)/*/bin: install Debian's postgresql (make test-deps)")
        }
        return "\(root)/\(version)/bin"
    }

    /// A loopback TCP port nothing listens on now: the kernel's pick for a socket bound to port 0, closed again.
    /// Also used by tests that start other servers on a known port (nginx in ClusterBalancerTests).
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ClusterError("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw ClusterError("bind: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Runs a PostgreSQL tool, as `user` through runuser when set, and waits for it; its output goes to a file in
    /// the temporary directory and into the error if it fails. (posix_spawn and waitpid: Foundation's Process can
    /// miss the exit of a child started from a test's thread.)
    static func run(_ executable: String, _ arguments: [String], as user: String?) throws {
        let argv = (user.map { ["/usr/sbin/runuser", "-u", $0, "--"] } ?? []) + [executable] + arguments
        let outputPath = NSTemporaryDirectory() + "/parlor-pg-tool-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).txt"
        defer { unlink(outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, cArguments, environ)
        guard spawned == 0 else { throw ClusterError("cannot start \(argv[0]): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw ClusterError("waitpid: \(String(cString: strerror(errno)))") }
        }
        guard status == 0 else {  // 0: exited normally with status 0
            let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            throw ClusterError("\((executable as NSString).lastPathComponent) \(arguments.joined(separator: " ")) failed "
                + "(wait status \(status)): \(output)")
        }
    }
}

public struct ClusterError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = "test PostgreSQL: " + description }
}

/// Database names unique within the process.
private final class Counter: Sendable {
    // An atomic, not a Mutex: make tsan reported this counter's Mutex-guarded increments as a race (most likely
    // because ThreadSanitizer does not see the futex under Synchronization's Mutex on Linux).
    private let value = Atomic(0)
    func next() -> Int { value.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue }
}

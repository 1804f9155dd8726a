#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// The built `parlor` binary, run as a child process from a directory that holds nothing of the package.
@Suite struct ExecutableTests {
    /// The `parlor` built next to this test bundle (any --scratch-path), else the package's .build/debug.
    static func binaryPath() throws -> String {
        var candidates: [String] = []
        for executable in [CommandLine.arguments.first, Bundle.main.executablePath].compactMap({ $0 }) {
            var directory = URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent()
            // The runner may be inside the .xctest bundle (Apple) or be the bundle itself (Linux).
            for _ in 0..<4 {
                candidates.append(directory.appendingPathComponent("parlor").path)
                directory.deleteLastPathComponent()
            }
        }
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(packageRoot.appendingPathComponent(".build/debug/parlor").path)
        for candidate in candidates {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue,
               FileManager.default.isExecutableFile(atPath: candidate) {
                return candidate
            }
        }
        throw TestFailure("the parlor executable is not built; run `swift build` first (looked in: \(candidates.joined(separator: ", ")))")
    }

    /// A running `parlor` with pipes on stdout and stderr; killed if a test leaves it running.
    final class Child {
        let process = Process()
        let stdout = Pipe()
        let stderr = Pipe()
        private let exited = DispatchSemaphore(value: 0)
        private var pending: [UInt8] = []

        /// `prefix` runs the binary under another program, e.g. `["prlimit", "--nofile=256", "--"]`.
        init(_ arguments: [String], in directory: String, prefix: [String] = []) throws {
            if let launcher = prefix.first {
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = [launcher] + prefix.dropFirst() + [try ExecutableTests.binaryPath()] + arguments
            } else {
                process.executableURL = URL(fileURLWithPath: try ExecutableTests.binaryPath())
                process.arguments = arguments
            }
            process.currentDirectoryURL = URL(fileURLWithPath: directory)
            // Only this test's settings: no PARLOR_* from the environment running the tests.
            var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PARLOR_") }
            environment["PARLOR_LOG_LEVEL"] = "warn"
            process.environment = environment
            process.standardOutput = stdout
            process.standardError = stderr
            let exited = self.exited
            process.terminationHandler = { _ in exited.signal() }
            try process.run()
        }

        deinit {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }

        /// The next stdout line, waiting at most `timeout` seconds.
        func readLine(timeout: Double = 10) throws -> String {
            let deadline = Date().addingTimeInterval(timeout)
            let fd = stdout.fileHandleForReading.fileDescriptor
            while true {
                if let newline = pending.firstIndex(of: 10) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeFirst(newline + 1)
                    return line
                }
                let remaining = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
                var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard remaining > 0, poll(&descriptor, 1, remaining) > 0 else {
                    throw TestFailure("no line on stdout within \(timeout) s (got \(String(decoding: pending, as: UTF8.self)))")
                }
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard count > 0 else { throw TestFailure("stdout closed before a line; stderr: \(errorOutput())") }
                pending += chunk[0..<count]
            }
        }

        /// Waits for the process to exit; nil if it is still running after `timeout` seconds.
        func waitForExit(timeout: Double = 5) -> Int32? {
            guard exited.wait(timeout: .now() + timeout) == .success else { return nil }
            process.waitUntilExit()
            return process.terminationReason == .exit ? process.terminationStatus : -process.terminationStatus
        }

        /// What the process wrote on stderr (call after it exited).
        func errorOutput() -> String {
            guard !process.isRunning else { return "(still running)" }
            return String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }

        func remainingOutput() -> String {
            String(decoding: pending + stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }
    }

    /// The port of `listening on http://127.0.0.1:PORT`, after checking the line's exact shape.
    static func port(fromListeningLine line: String) throws -> Int {
        let prefix = "listening on http://127.0.0.1:"
        guard line.hasPrefix(prefix), let port = Int(line.dropFirst(prefix.count)), port > 0, port < 65536 else {
            throw TestFailure("unexpected first stdout line: \(line)")
        }
        return port
    }

    @Test func servesFromAnyWorkingDirectoryAndStopsOnSIGTERM() throws {
        try withTemporaryDirectory { workDirectory in
            try withTemporaryDirectory { dataDirectory in
                let database = dataDirectory + "/x.db"
                let child = try Child(["serve", "--host", "127.0.0.1", "--port", "0", "--database", database, "--log-level", "info"],
                                      in: workDirectory)
                let line = try child.readLine()
                let port = try Self.port(fromListeningLine: line)
                #expect(line == "listening on http://127.0.0.1:\(port)")

                let connection = try RawConnection(port: port)
                try connection.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                let health = try connection.readResponse()
                #expect(health.status == 200)
                #expect(health.object["status"] as? String == "ok", "the migrations ran: \(health.text)")
                try connection.send("POST /rooms HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 20\r\n\r\n{\"display_name\":\"x\"}")
                #expect(try connection.readResponse().status == 201, "the schema is there")
                #expect(FileManager.default.fileExists(atPath: database))

                #expect(kill(child.process.processIdentifier, SIGTERM) == 0)
                let status = child.waitForExit()
                let errorOutput = child.errorOutput()
                #expect(status == 0, "exit status after SIGTERM; stderr: \(errorOutput)")
                #expect(try connection.waitForClose(), "open connections are closed on shutdown")
                // A new database's migrations are logged before the server listens, and once they ran.
                #expect(errorOutput.contains("applying database migrations") && errorOutput.contains("001_initial"))
                #expect(errorOutput.contains("database migrations applied"))
            }
        }
    }

    @Test func servesWithAnInMemoryDatabase() throws {
        try withTemporaryDirectory { workDirectory in
            let child = try Child(["serve", "--host", "127.0.0.1", "--port", "0", "--database", ":memory:"], in: workDirectory)
            let port = try Self.port(fromListeningLine: try child.readLine())
            let connection = try RawConnection(port: port)
            try connection.send("POST /auth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 16\r\n\r\n{\"name\":\"alice\"}")
            let auth = try connection.readResponse()
            #expect(auth.status == 200)
            #expect(auth.object["jwt"] is String)
            #expect(kill(child.process.processIdentifier, SIGTERM) == 0)
            #expect(child.waitForExit() == 0, "stderr: \(child.errorOutput())")
            #expect(try FileManager.default.contentsOfDirectory(atPath: workDirectory).isEmpty, "an in-memory run writes no files")
        }
    }

    @Test func serveHelpListsTheOptions() throws {
        try withTemporaryDirectory { workDirectory in
            let child = try Child(["serve", "--help"], in: workDirectory)
            #expect(child.waitForExit() == 0)
            let help = child.remainingOutput()
            #expect(help.contains("--port"))
            #expect(help.contains("--database"))
            #expect(help.contains("PARLOR_PORT"))
            for option in ["--media", "--media-port", "--media-address", "--max-forwarded-speakers"] { #expect(help.contains(option)) }
        }
    }

    @Test func unknownOptionFailsWithAMessage() throws {
        try withTemporaryDirectory { workDirectory in
            let child = try Child(["serve", "--bogus", "1"], in: workDirectory)
            let status = child.waitForExit()
            #expect(status != nil && status != 0)
            #expect(child.errorOutput().contains("--bogus"))
        }
    }
}

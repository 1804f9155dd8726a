#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import ParlorApp

enum Server {
    /// `--ready-file`, in the shape of AppConfiguration's options so the README's table lists it too.
    static let helpText = """
          --ready-file          PARLOR_READY_FILE         default unset
              once listening, write the server's URL and a newline to this file (atomically: a temporary file renamed into place; removed at start and at a clean stop), for scripts that wait on a file with a deadline

        """

    /// Starts Parlor, prints the listening line first on stdout, and shuts down cleanly on SIGTERM or SIGINT.
    static func run(options arguments: [String]) -> Never {
        let environment = ProcessInfo.processInfo.environment
        let (options, readyFile) = splitReadyFile(arguments, environment: environment)
        let configuration: AppConfiguration
        do {
            configuration = try AppConfiguration.parse(arguments: options, environment: environment)
        } catch {
            fail("\(error)")
        }
        // A file left by an earlier run must not announce this one before it listens.
        if let readyFile { try? FileManager.default.removeItem(atPath: readyFile) }
        // Handle the signals on a queue rather than in an async signal handler, where little is safe to call.
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let stop = DispatchSemaphore(value: 0)
        let signalQueue = DispatchQueue(label: "parlor.signals")
        let sources = [SIGTERM, SIGINT].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: signalQueue)
            source.setEventHandler { stop.signal() }
            source.resume()
            return source
        }

        let app: ParlorApplication
        do {
            app = try buildApplication(configuration)
        } catch {
            fail("cannot start: \(error)", code: 1)
        }
        // Written straight to fd 1 so it is out (unbuffered) before anything else: scripts wait for this line.
        let line = Array("listening on \(app.baseURL)\n".utf8)
        _ = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if let metricsURL = app.metricsBaseURL {
            // Second line, so scripts that wait for the first are unaffected; with port 0 this is how to find it.
            let metricsLine = Array("metrics on \(metricsURL)\n".utf8)
            _ = metricsLine.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        }
        if let media = app.media {
            // Its own line after those, so scripts reading the first (or the metrics one) are unaffected.
            let mediaLine = Array("media on udp port \(media.localAddress.port), announced as \(media.candidates.map(\.description).joined(separator: ","))\n".utf8)
            _ = mediaLine.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        }
        if configuration.devMode {
            // After the listening line (scripts wait for it first), on stderr, so nobody mistakes this for production.
            FileHandle.standardError.write(Data(configuration.devBanner.utf8))
        }
        app.logger.info("parlor started", ["address": app.baseURL, "database": configuration.databaseDescription])
        if let readyFile {
            do {
                try writeAtomically(app.baseURL + "\n", to: readyFile)
            } catch {
                app.logger.error("cannot write --ready-file: stopping", ["path": readyFile, "error": "\(error)"])
                app.shutdown(step: { _ in })
                fail("cannot write --ready-file \(readyFile): \(error)", code: ExitCode.failure)
            }
        }

        // The signal sources must outlive the wait: an optimized build would otherwise release them early.
        withExtendedLifetime(sources) { stop.wait() }
        app.logger.info("shutting down")
        let deadline = ShutdownDeadline(seconds: configuration.http.shutdownTimeout.seconds, signals: stop, logger: app.logger)
        if let readyFile { try? FileManager.default.removeItem(atPath: readyFile) }
        withExtendedLifetime(sources) { app.shutdown(step: deadline.enter) }
        app.logger.info("stopped")
        exit(0)
    }

    /// Takes `--ready-file PATH` (or `=PATH`, or PARLOR_READY_FILE) out of the arguments: it is this command's
    /// option, not the server configuration's.
    private static func splitReadyFile(_ arguments: [String], environment: [String: String]) -> ([String], String?) {
        var rest: [String] = []
        var path = environment["PARLOR_READY_FILE"].flatMap { $0.isEmpty ? nil : $0 }
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--ready-file" {
                guard index < arguments.count else { fail("--ready-file needs a value; see parlor serve --help") }
                path = arguments[index]
                index += 1
            } else if argument.hasPrefix("--ready-file=") {
                path = String(argument.dropFirst("--ready-file=".count))
            } else {
                rest.append(argument)
                continue
            }
            guard let given = path, !given.isEmpty else { fail("--ready-file needs a path; see parlor serve --help") }
        }
        return (rest, path)
    }

    /// Writes `text` to a temporary file beside `path` and renames it into place: a reader sees all of it or nothing.
    private static func writeAtomically(_ text: String, to path: String) throws {
        let temporary = path + ".tmp-\(getpid())"
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
            guard rename(temporary, path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            throw error
        }
    }
}

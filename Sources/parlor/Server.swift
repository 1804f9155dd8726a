#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import ParlorApp

enum Server {
    /// Starts Parlor, prints the listening line first on stdout, and shuts down cleanly on SIGTERM or SIGINT.
    static func run(options: [String]) -> Never {
        let configuration: AppConfiguration
        do {
            configuration = try AppConfiguration.parse(arguments: options, environment: ProcessInfo.processInfo.environment)
        } catch {
            fail("\(error)")
        }
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

        // The signal sources must outlive the wait: an optimized build would otherwise release them early.
        withExtendedLifetime(sources) { stop.wait() }
        app.logger.info("shutting down")
        let deadline = ShutdownDeadline(seconds: configuration.http.shutdownTimeout.seconds, signals: stop, logger: app.logger)
        withExtendedLifetime(sources) { app.shutdown(step: deadline.enter) }
        app.logger.info("stopped")
        exit(0)
    }
}

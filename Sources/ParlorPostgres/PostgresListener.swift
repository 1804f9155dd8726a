#if canImport(Glibc)
import Glibc
#endif
import CLibPQ
import ParlorStore
import Foundation

/// A connection of its own that LISTENs on one channel, on a dedicated thread: it waits in poll(2) on the libpq
/// socket, hands each notification's payload to `onNotify`, and runs `periodic` on the same connection every
/// `interval` (a node's heartbeat). When the connection is lost it connects again (after 100 ms, backing off to
/// every `interval` until it works), LISTENs again and calls `onConnected`: notifications sent meanwhile are lost,
/// so the owner must then catch up from the tables. Callbacks run on the listener's thread.
public final class PostgresListener: @unchecked Sendable {  // `stopping` is atomic-by-lock; the connection is the thread's own
    public let url: PostgresURL
    public let channel: String
    private let interval: Double
    private let onNotify: @Sendable (String) -> Void
    private let onConnected: @Sendable () -> Void
    private let periodic: @Sendable (PostgresConnection) throws -> Void
    private let onError: @Sendable (PostgresError) -> Void
    private let lock = NSLock()
    private var stopping = false
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    /// A pipe whose read end the thread polls beside the socket, so `stop()` wakes it at once.
    private var wake: [Int32] = [-1, -1]

    /// `channel` must be a plain SQL identifier (it is interpolated into LISTEN).
    public init(url: PostgresURL, channel: String, interval: Double,
                onNotify: @escaping @Sendable (String) -> Void,
                onConnected: @escaping @Sendable () -> Void,
                periodic: @escaping @Sendable (PostgresConnection) throws -> Void,
                onError: @escaping @Sendable (PostgresError) -> Void) {
        precondition(channel.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }, "channel must be an identifier")
        self.url = url
        self.channel = channel
        self.interval = max(0.05, interval)
        self.onNotify = onNotify
        self.onConnected = onConnected
        self.periodic = periodic
        self.onError = onError
    }

    /// Starts the thread. The first LISTEN happens on the thread: call `onConnected`'s work idempotent.
    public func start() throws {
        guard pipe(&wake) == 0 else { throw PostgresError(message: "pipe: \(String(cString: strerror(errno)))") }
        let thread = Thread.named("parlor-pglisten") { [self] in
            self.run()
            self.finished.signal()
        }
        self.thread = thread
        thread.start()
    }

    /// Stops the thread and closes its connection; waits for it. Idempotent.
    public func stop() {
        let first: Bool = lock.withLock {
            defer { stopping = true }
            return !stopping && thread != nil
        }
        guard first else { return }
        var byte: UInt8 = 1
        _ = write(wake[1], &byte, 1)
        finished.wait()
        close(wake[0])
        close(wake[1])
    }

    private var isStopping: Bool { lock.withLock { stopping } }

    private static let firstRetryDelay = 0.1

    private func run() {
        var connection: PostgresConnection?
        var nextPeriodic = Date()
        // Between attempts to connect: from 100 ms, doubling up to `interval`, so a restarted server is found soon.
        var retryDelay = Self.firstRetryDelay
        while !isStopping {
            if connection == nil {
                do {
                    let fresh = try PostgresConnection(url: url)
                    try fresh.execute("LISTEN \(channel)")
                    connection = fresh
                    retryDelay = Self.firstRetryDelay
                    onConnected()
                } catch {
                    onError(error)
                    waitForWake(timeout: min(retryDelay, interval))
                    retryDelay *= 2
                    continue
                }
            }
            guard let current = connection, let handle = current.handle else { connection = nil; continue }
            let now = Date()
            if now >= nextPeriodic {
                nextPeriodic = now.addingTimeInterval(interval)
                do {
                    try periodic(current)
                } catch let error as PostgresError {
                    onError(error)
                    if error.connectionLost { connection = nil; continue }
                } catch {
                    onError(PostgresError(message: "\(error)"))
                }
            }
            if !drainNotifications(handle) {
                onError(PostgresError(message: "the listening connection was lost: \(PostgresConnection.errorText(handle))",
                                      connectionLost: true))
                current.close()
                connection = nil
                continue
            }
            let timeout = max(0, nextPeriodic.timeIntervalSinceNow)
            var fds = [pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0),
                       pollfd(fd: wake[0], events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, 2, Int32(timeout * 1000) + 1)
        }
        connection?.close()
    }

    /// Reads what arrived and hands over every queued notification; false when the connection is gone.
    private func drainNotifications(_ handle: OpaquePointer) -> Bool {
        guard PQconsumeInput(handle) == 1, PQstatus(handle) == CONNECTION_OK else { return false }
        while let notification = PQnotifies(handle) {
            let payload = String(cString: notification.pointee.extra)
            PQfreemem(notification)
            onNotify(payload)
        }
        return true
    }

    private func waitForWake(timeout: Double) {
        var fds = [pollfd(fd: wake[0], events: Int16(POLLIN), revents: 0)]
        _ = poll(&fds, 1, Int32(timeout * 1000))
    }
}

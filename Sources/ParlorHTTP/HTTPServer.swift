import Foundation
import ParlorCodec
import ParlorLoop
import ParlorMetrics
import Synchronization

/// The HTTP/1.1 and WebSocket server: a TCPServer whose connections speak HTTP until a route upgrades them.
public final class HTTPServer: Sendable {
    public let configuration: HTTPServerConfiguration
    public let group: EventLoopGroup
    let context: HTTPServerContext
    private let tcp: TCPServer

    /// The port actually bound (the kernel's choice when configured with 0).
    public var port: Int { tcp.localAddress.port }
    public var host: String { configuration.host }
    public var usesTLS: Bool { configuration.tlsCertificatePath != nil && configuration.tlsPrivateKeyPath != nil }

    /// Each request goes through `pipeline`, the app's middleware and router. With `metrics`, connections, requests
    /// and refusals are counted there (the metrics listener itself passes nil).
    public init(configuration: HTTPServerConfiguration, group: EventLoopGroup, pipeline: HTTPPipeline, logger: Logger,
                metrics: ServerMetrics? = nil) throws {
        self.configuration = configuration
        self.group = group
        let context = HTTPServerContext(configuration: configuration, pipeline: pipeline, logger: logger, metrics: metrics)
        self.context = context
        var tls: TLSContext?
        if let certificate = configuration.tlsCertificatePath, let key = configuration.tlsPrivateKeyPath {
            tls = try TLSContext(certificateChainPath: certificate, privateKeyPath: key)
        }
        tcp = try TCPServer(group: group, host: configuration.host, port: configuration.port, tls: tls, logger: logger) { connection in
            context.openConnections.add(1, ordering: .relaxed)
            context.metrics?.httpConnections.add()
            let handler = HTTPConnectionHandler(connection: connection, context: context)
            connection.handler = handler
            if !handler.admitPeer() { handler.refuseTooManyConnections() }
        }
    }

    public var openConnectionCount: Int { context.openConnections.load(ordering: .relaxed) }

    /// Stops accepting, closes idle keep-alive connections, lets in-flight requests finish, closes WebSockets with
    /// 1001, and after half of `shutdownTimeout` (the rest is for the rooms and the database) closes whatever is left.
    /// Returns when every connection is closed.
    public func shutdown() {
        context.shuttingDown.store(true, ordering: .releasing)
        tcp.stopAccepting()
        for loop in group.loops {
            loop.submitAndWait {
                for connection in loop.openConnections() {
                    switch connection.handler {
                    case let http as HTTPConnectionHandler: http.closeWhenIdle()
                    case let socket as WebSocketConnection: socket.close(code: WebSocketCloseCode.goingAway, reason: "server shutting down")
                    case let stream as HTTPStreamConnection: stream.closeForShutdown()
                    default: connection.close()
                    }
                }
            }
        }
        context.waitForConnectionsToClose(timeout: .seconds(configuration.shutdownTimeout.seconds / 2))
        for loop in group.loops {
            loop.submitAndWait { for connection in loop.openConnections() { connection.close() } }
        }
    }
}

/// What every connection of one server shares.
final class HTTPServerContext: Sendable {
    let configuration: HTTPServerConfiguration
    let pipeline: HTTPPipeline
    let logger: Logger
    let metrics: ServerMetrics?
    let openConnections = Atomic<Int>(0)
    let shuttingDown = Atomic<Bool>(false)
    /// Set by the first request that carried forwarding headers from a peer not trusted to send them.
    let warnedOfUntrustedForwarding = Atomic<Bool>(false)

    init(configuration: HTTPServerConfiguration, pipeline: HTTPPipeline, logger: Logger, metrics: ServerMetrics?) {
        self.configuration = configuration
        self.pipeline = pipeline
        self.logger = logger
        self.metrics = metrics
    }

    private let closedCondition = NSCondition()
    /// Open connections per client address, for maxConnectionsPerIP.
    private let connectionsPerIP = Locked<[String: Int]>([:])

    /// Counts a connection under `key` (a client address, or a proxy peer's); false when that key is over `limit`
    /// (0: no limit). It stays counted until `release`.
    func admit(_ key: String, limit: Int) -> Bool {
        let count = connectionsPerIP.withLock { counts in
            counts[key, default: 0] += 1
            return counts[key]!
        }
        return limit == 0 || count <= limit
    }

    func connectionClosed(releasing keys: ConnectionCapKeys) {
        if !keys.isEmpty {
            connectionsPerIP.withLock { counts in
                keys.forEach { key in
                    let remaining = (counts[key] ?? 1) - 1
                    counts[key] = remaining > 0 ? remaining : nil
                }
            }
        }
        openConnections.subtract(1, ordering: .relaxed)
        closedCondition.lock()
        closedCondition.broadcast()
        closedCondition.unlock()
    }

    /// Blocks until every connection has closed or `timeout` has passed.
    func waitForConnectionsToClose(timeout: TimeSpan) {
        let deadline = Date().addingTimeInterval(timeout.seconds)
        closedCondition.lock()
        while openConnections.load(ordering: .relaxed) > 0, closedCondition.wait(until: deadline) {}
        closedCondition.unlock()
    }
}

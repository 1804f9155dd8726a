#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorHTTP
import ParlorLoop
import ParlorMedia
import ParlorMetrics
import ParlorRooms
import ParlorStore
import Synchronization

/// A running Parlor: database, rooms thread, event loops and the HTTP/WebSocket server.
/// The executable and the tests both start it with `buildApplication`.
public final class ParlorApplication: Sendable {
    public let configuration: AppConfiguration
    /// SQLite or PostgreSQL (`--database`).
    public let storage: AppStorage
    public let rooms: RoomsService
    /// The rooms' deliveries to WebSocket connections (`ClientID` to connection).
    let delivery: WebSocketDelivery
    public let users: UserDirectory
    public let tokens: TokenService
    public let server: HTTPServer
    /// The main listener's middleware and routes: `pipeline.respond(to:)` answers a request as the listener would,
    /// without a socket (tests).
    public let pipeline: HTTPPipeline
    /// The --metrics-address listener, when set.
    public let metricsServer: HTTPServer?
    public let metrics: ServerMetrics
    public let logger: Logger
    /// The forwarding unit (--media sfu); nil with --media mesh.
    public let media: MediaServer?
    /// This node's end of the media links to other nodes (--cluster-media-address, PostgreSQL only); nil without it.
    public let mediaLink: MediaLinkEndpoint?
    /// The forwarding unit's use of the links: each node serves its own connections' media (MediaCascade.swift).
    let mediaCascade: MediaCascade?
    /// Writes this node's recordings (nil: recordings are refused); finished at shutdown, before the media server stops.
    private let recordingEngine: (any RecordingEngine)?
    private let group: EventLoopGroup
    /// The threads that run the routes' database work, off the loops.
    let executor: DatabaseExecutor
    private let stopped = Atomic<Bool>(false)
    private let webhooks: WebhookDispatcher?

    /// The bound port (the kernel's choice with port 0).
    public var port: Int { server.port }
    public var host: String { configuration.http.host }
    /// "http://HOST:PORT", with 0.0.0.0 shown as it was bound.
    public var baseURL: String { "\(server.usesTLS ? "https" : "http")://\(host.contains(":") ? "[\(host)]" : host):\(port)" }
    /// What other nodes dial without --node-url: the listening address, a wildcard as loopback (one machine).
    static func dialURL(host: String, port: Int, tls: Bool) -> String {
        let dialed = host == "0.0.0.0" || host.isEmpty ? "127.0.0.1" : host == "::" ? "::1" : host
        return "\(tls ? "https" : "http")://\(dialed.contains(":") ? "[\(dialed)]" : dialed):\(port)"
    }

    /// The media server's bound UDP port (--media sfu), or nil.
    public var mediaPort: Int? { media.map { Int($0.localAddress.port) } }
    /// "http://HOST:PORT" of the metrics listener (its bound port), or nil without --metrics-address.
    public var metricsBaseURL: String? {
        metricsServer.map { "http://\($0.host.contains(":") ? "[\($0.host)]" : $0.host):\($0.port)" }
    }

    init(configuration: AppConfiguration) throws {
        self.configuration = configuration
        let logger = Logger(level: configuration.logLevel, format: configuration.logFormat)
        self.logger = logger
        ProcessSetup.prepareForServing()
        try configuration.validate()

        let storage = try AppStorage.open(configuration, logger: logger)
        self.storage = storage
        // Until the rooms service owns the rest, a failure below must not leave the database open.
        var opened = false
        defer { if !opened { storage.close() } }

        var configuration = configuration
        if configuration.tlsSelfSigned, configuration.http.tlsCertificatePath == nil {
            let files = try SelfSignedCertificate.ensure(in: configuration.dataDirectory)
            configuration.http.tlsCertificatePath = files.certificate
            configuration.http.tlsPrivateKeyPath = files.key
        }
        let secret: [UInt8]
        if let configured = configuration.jwtSecret {
            secret = Array(configured.utf8)
        } else if let shared = try storage.sharedSecret(named: "jwt") {
            secret = shared  // every node on the database signs and verifies with the same key
        } else if configuration.isInMemory && configuration.databasePath != nil {
            secret = SecretFile.random()  // nothing survives an in-memory run, so neither need its tokens
        } else {
            secret = try SecretFile.loadOrCreate(in: configuration.dataDirectory)
        }
        tokens = TokenService(secret: secret, timeToLiveSeconds: configuration.tokenTTLSeconds)
        users = UserDirectory(store: storage.userStore)
        var roomsConfiguration = configuration.rooms
        roomsConfiguration.iceServers = configuration.resolvedICEServers
        if let turnSecret = configuration.turnSecret {
            roomsConfiguration.turn = TURNCredentials(secret: Array(turnSecret.utf8), urls: configuration.turnURLs,
                                                      timeToLiveSeconds: configuration.turnTTLSeconds)
        }
        roomsConfiguration.visibility = configuration.resolvedRoomVisibility
        roomsConfiguration.recordingsDirectory = configuration.resolvedRecordingsDirectory
        roomsConfiguration.mediaLinks = configuration.clusterMediaAddress != nil && configuration.rooms.mediaMode == .sfu
        // Webhook receivers hold their signing key: it must not be the JWT secret, which mints tokens for anyone.
        var webhookSecret: [UInt8] = []
        if !configuration.webhookURLs.isEmpty {
            if let configured = configuration.webhookSecret {
                webhookSecret = Array(configured.utf8)
            } else if let shared = try storage.sharedSecret(named: "webhook") {
                webhookSecret = shared
            } else if configuration.isInMemory && configuration.databasePath != nil {
                webhookSecret = SecretFile.random()
            } else {
                webhookSecret = try SecretFile.loadOrCreate(in: configuration.dataDirectory, fileName: SecretFile.webhookFileName)
            }
        }
        // The loops come before the rooms thread: the metrics count requests per loop, and everything records into them.
        let loopCount = configuration.http.loopCount > 0 ? configuration.http.loopCount : System.coreCount
        let group = try EventLoopGroup(loopCount: loopCount)
        self.group = group
        let metrics = ServerMetrics(loops: group.loops)
        self.metrics = metrics
        let roomStore = storage.roomStore
        let webhookParts: (WebhookOutbox, WebhookDispatcher)?
        do {
            webhookParts = try Self.startWebhooks(configuration, storage: storage, store: roomStore, secret: webhookSecret,
                                                  logger: logger, metrics: metrics)
        } catch {
            group.shutdown()
            throw error
        }
        let webhooks = webhookParts?.1
        self.webhooks = webhooks
        var media: MediaServer?
        var clusterLink: (any ClusterLink)?
        let delivery = WebSocketDelivery()
        self.delivery = delivery
        do {
            clusterLink = storage.clusterLink(for: roomStore, lease: roomsConfiguration.nodeLease, logger: logger)
            if configuration.rooms.mediaMode == .sfu {
                media = try MediaServer(configuration: configuration.mediaServerConfiguration(httpPort: configuration.http.port), logger: logger,
                                        metrics: metrics)
            }
            self.media = media
            rooms = try RoomsService(store: roomStore, thread: EventLoop(name: "parlor-rooms"), configuration: roomsConfiguration,
                                     logger: logger, delivery: delivery, observer: webhookParts?.0, metrics: metrics, media: media,
                                     cluster: clusterLink,
                                     // With several nodes: a user changed on another node is read afresh here (its tokens may be revoked).
                                     clusterUserChanged: { [users] userID in users.forget(userID: userID) })
        } catch {
            media?.stop()
            group.shutdown()
            webhooks?.stop()
            throw error
        }
        do {
            // Recording needs the forwarding unit; without an engine recordings are refused, and those a previous
            // process left are still closed as interrupted.
            let (factory, rooms) = (configuration.recordingEngine, rooms)
            let engine = media.flatMap { media in factory.map { $0.make(media, rooms) } }
            recordingEngine = engine
            let interrupted = factory?.closeInterrupted(configuration.resolvedRecordingsDirectory) ?? [:]
            try rooms.useRecordingEngine(engine, interruptedManifests: interrupted)
        } catch {
            rooms.stop()
            media?.stop()
            group.shutdown()
            webhooks?.stop()
            throw error
        }
        opened = true
        let authLimiter = configuration.authRatePerIP > 0
            ? AddressRateLimiter(rate: configuration.authRatePerIP, burst: configuration.authRatePerIP * 3) : nil
        let roomCreationLimiter = configuration.roomCreationsPerMinute > 0
            ? AddressRateLimiter(rate: configuration.roomCreationsPerMinute / 60, burst: configuration.roomCreationsPerMinute * 2) : nil
        let executor = DatabaseExecutor(readerCount: configuration.readerCount)
        self.executor = executor
        if configuration.rooms.recordingRetentionDays > 0, let loop = group.loops.first {
            RecordingRetention.start(rooms: rooms, loop: loop, executor: executor, logger: logger)
        }
        let roomsService: RoomsService = rooms
        // Several nodes: downloads of recordings another node holds are proxied from it, signed under this secret.
        let nodeProxyAuth: NodeProxyAuth?
        do {
            nodeProxyAuth = try storage.sharedSecret(named: "node-proxy").map { NodeProxyAuth(secret: $0) }
        } catch {
            executor.stop()
            group.shutdown()
            media?.stop()
            rooms.stop()
            webhooks?.stop()
            throw error
        }
        let liveStreams = media.map { LiveStreams(media: $0, metrics: metrics, rooms: roomsService) }
        let routes = Routes(configuration: configuration, storage: storage, executor: executor, rooms: rooms, delivery: delivery,
                            users: users, tokens: tokens, logger: logger, authLimiter: authLimiter, roomCreationLimiter: roomCreationLimiter,
                            liveStreams: liveStreams, nodeProxyAuth: nodeProxyAuth)
        let pipeline = routes.pipeline()
        self.pipeline = pipeline
        var mainServer: HTTPServer?
        do {
            let server = try HTTPServer(configuration: configuration.http, group: group, pipeline: pipeline, logger: logger,
                                        metrics: metrics)
            mainServer = server
            self.server = server
            metricsServer = try configuration.metricsAddress.map { address in
                try MetricsEndpoint.startListener(address, main: configuration.http, group: group,
                                                  router: MetricsEndpoint.listenerRouter(metrics, health: routes.health),
                                                  logger: logger)
            }
            if nodeProxyAuth != nil {
                try storage.registerNodeURL(configuration.nodeURL ?? Self.dialURL(host: configuration.http.host, port: server.port,
                                                                                  tls: server.usesTLS), store: roomStore, link: clusterLink)
            }
            (mediaLink, mediaCascade) = try Self.startMediaLink(configuration, storage: storage, store: roomStore, media: media,
                                                                metrics: metrics, logger: logger)
        } catch {
            mainServer?.shutdown()
            executor.stop()
            group.shutdown()
            media?.stop()
            rooms.stop()
            webhooks?.stop()
            storage.close()
            throw error
        }
    }

    /// Graceful stop: no new connections, in-flight requests finish, WebSockets get close 1001 and keep their
    /// memberships for the next start, then the database is closed cleanly. Safe to call more than once.
    /// `step` hears the name of each step as it starts, so whoever bounds the stop can say where it got stuck.
    public func shutdown(step: (String) -> Void = { _ in }) {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        step("closing connections")
        rooms.beginShutdown()
        metricsServer?.shutdown()
        server.shutdown()
        step("finishing database work")
        executor.stop()  // after the servers: in-flight requests finished; before the database closes
        step("finishing recordings")
        recordingEngine?.stopAll()  // whole files now; their rows become interrupted at the next start
        step("stopping media")
        mediaCascade?.stop()  // its listener rows go while the database is open
        mediaLink?.stop()  // its offer row too
        media?.stop()  // before the rooms thread: its last speaking-off events still find it running
        step("stopping the rooms and giving up the node lease")
        rooms.stop()
        recordingEngine?.stopAll()  // again: a recording the rooms thread started after the first call is finished too
        step("stopping webhooks")
        webhooks?.stop()
        group.shutdown()
        step("closing the database")
        storage.close()
    }

    /// The SQLite database, for tests and tools that reach into it; throws on a server that runs on PostgreSQL.
    public var database: Database {
        get throws {
            guard case .sqlite(let database) = storage else { throw NotSQLiteError() }
            return database
        }
    }
}

extension ParlorApplication {
    /// Parlor for integration tests: 127.0.0.1, a free port, an in-memory database, no files, quiet logs.
    /// It accepts connections when this returns; `shutdown()` stops it.
    public static func inMemory(_ configure: (inout AppConfiguration) -> Void = { _ in }) throws -> ParlorApplication {
        var configuration = AppConfiguration.testing()
        configure(&configuration)
        return try buildApplication(configuration)
    }

    /// The base URL clients use, e.g. http://127.0.0.1:41234.
    public var url: URL { URL(string: baseURL)! }
}

/// Builds and starts Parlor: when this returns, it is accepting connections on `app.port`.
public func buildApplication(_ configuration: AppConfiguration) throws -> ParlorApplication {
    try ParlorApplication(configuration: configuration)
}

enum System {
    static var coreCount: Int {
        #if canImport(Glibc)
        return max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        #else
        return 1
        #endif
    }
}

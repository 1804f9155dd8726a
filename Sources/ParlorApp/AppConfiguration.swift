import Foundation
import ParlorHTTP
import ParlorLoop
import ParlorMedia
import ParlorRooms
import ParlorSRTP

/// Everything `parlor serve` can be told, from flags or PARLOR_* environment variables (flags win).
public struct AppConfiguration: Sendable {
    public var http = HTTPServerConfiguration()
    public var rooms = RoomsConfiguration()
    /// Holds the database (unless --database says otherwise) and the generated JWT secret.
    public var dataDirectory = "./data"
    /// nil: `<dataDirectory>/parlor.db`; ":memory:" runs with no files at all.
    public var databasePath: String?
    public var readerCount = 2
    /// nil: PARLOR_JWT_SECRET was not set; a secret is generated once and kept in the data directory.
    public var jwtSecret: String?
    public var tokenTTLSeconds: Int64 = 6 * 3600
    public var logLevel = Logger.Level.info
    public var logFormat = Logger.Format.text
    /// Largest JSON request accepted on the WebSocket; bigger ones get an error reply.
    public var maxRequestBytes = 32 * 1024
    /// STUN/TURN URLs for WebRTC; TURN entries get the username and credential.
    public var iceURLs: [String] = []
    public var iceUsername: String?
    public var iceCredential: String?
    /// coturn's static-auth-secret: with `turnURLs`, every session gets TURN credentials that expire after `turnTTLSeconds`.
    public var turnSecret: String?
    public var turnURLs: [String] = []
    public var turnTTLSeconds: Int64 = 86_400
    /// Enables the admin routes (kick, mute, delete any room) for `Authorization: Bearer <adminToken>`.
    public var adminToken: String?
    /// Seconds after an admin revocation during which the user's identities get no token from POST /auth and no
    /// token of theirs is accepted; 0: no block (tokens issued after the revocation work at once).
    public var revokeBlockSeconds: Int64 = 3600
    /// Adds POST /admin/reset and forced connection drops, for integration tests of client code. Never in production.
    public var testMode = false
    /// `--dev`: the dev preset was applied (see AppConfiguration+Dev.swift); refused with a non-loopback host.
    public var devMode = false
    /// A second, unauthenticated listener for Prometheus (GET /metrics and /healthz only); nil: none.
    public var metricsAddress: (host: String, port: Int)?
    /// Serve HTTPS with a self-signed certificate kept in the data directory (for talking across a LAN).
    public var tlsSelfSigned = false
    /// POST /auth requests per second per client address (with a burst of three times that); 0 turns it off.
    public var authRatePerIP = 10.0
    /// POST /rooms per minute per client address (with a burst of twice that); 0 turns it off.
    public var roomCreationsPerMinute = 10.0
    /// WebSocket messages per second per connection (burst of twice that) before a close with 1008; 0 turns it off.
    public var messagesPerSecond = 50.0
    public var access = AccessMode.open
    /// Who may read rooms' members and history; nil: public in open mode (LANs), members-only in code and closed.
    public var roomVisibility: RoomVisibility?
    /// Required by POST /auth in `code` mode (compared in constant time).
    public var accessCode: String?
    /// Receivers of room_started, room_finished, member_joined, member_left and the stage-room events' POSTs
    /// (http:// or https:// URLs).
    public var webhookURLs: [String] = []
    /// Signs webhook bodies (X-Parlor-Signature); when unset, a secret of its own is generated (kept in the data
    /// directory, 0600, or random for the run with an in-memory database): never the JWT secret.
    public var webhookSecret: String?
    /// Seconds a webhook is retried after it was written (--webhook-retry-for); then the next failure gives it up.
    public var webhookRetrySeconds = 86_400.0
    public var webhookInitialBackoff = TimeSpan.seconds(0.5)
    /// Rows the webhook outbox keeps at most (one per webhook and receiver); past it the oldest are dropped, counted.
    public var webhookQueueMax = 100_000
    /// PEM certificates https:// receivers are verified against instead of the system CA store.
    public var webhookCAFile: String?
    /// The media server's UDP port (--media sfu); nil: the HTTP port's number (a free port when that is 0).
    public var mediaPort: Int?
    /// Addresses announced to clients as host candidates; empty: found from the interfaces (AppConfiguration+Media.swift).
    public var mediaAddresses: [String] = []
    /// The SRTP profiles the media server's DTLS agrees to, preferred first (AppConfiguration+OptionsSRTP.swift).
    public var srtpProfiles = SRTPProtectionProfile.preferenceOrder
    /// Media workers (threads) the forwarding unit spreads sessions over (AppConfiguration+OptionsMediaWorkers.swift).
    public var mediaWorkers = AppConfiguration.defaultMediaWorkers
    /// --recordings-dir; nil: `<dataDirectory>/recordings` (`resolvedRecordingsDirectory`).
    public var recordingsDirectory: String?
    /// --node-url: what other nodes dial to reach this node's HTTP API (proxied recording downloads); nil: the address
    /// it listens on.
    public var nodeURL: String?
    /// Makes the engine that records rooms (--media sfu only; MediaRecordingEngine.swift); nil: recording is refused
    /// with room:error:recording-unavailable.
    public var recordingEngine: RecordingEngineFactory? = .mediaRecorder
    /// --cluster-media-address: where this node takes media-link datagrams from other nodes (PostgreSQL only); nil: no
    /// link socket (AppConfiguration+OptionsClusterLink.swift).
    public var clusterMediaAddress: TransportAddress?
    /// --cluster-secret: signs the nodes' media link offers; nil: generated once and kept in the database.
    public var clusterSecret: String?
    /// How often a node signs its link offer again (the offers' freshness window is three times it); tests shorten it.
    public var clusterLinkRenewal = TimeSpan.seconds(20)
    /// How often a node with speakers reads which other nodes listen in their rooms (MediaCascade.swift), and how long
    /// an unused link lives.
    public var clusterListenersPoll = TimeSpan.milliseconds(250)
    public var clusterLinkIdleTeardown = TimeSpan.seconds(60)

    public init() {
        http.host = "0.0.0.0"
        http.port = 8080
    }

    /// An in-memory server on 127.0.0.1 and a free port, for tests: no files, quiet logs, short timeouts stay default.
    public static func testing() -> AppConfiguration {
        var configuration = AppConfiguration()
        configuration.http.host = "127.0.0.1"
        configuration.http.port = 0
        configuration.http.loopCount = 2
        configuration.databasePath = ":memory:"
        configuration.jwtSecret = "parlor-test-secret-parlor-test-secret"
        configuration.logLevel = .warning
        // Tests drive many clients from one address as fast as they can; limit tests set their own.
        configuration.authRatePerIP = 0
        configuration.messagesPerSecond = 0
        configuration.http.webSocket.framesPerSecond = 0
        configuration.http.maxConnectionsPerIP = 0
        configuration.roomCreationsPerMinute = 0
        configuration.rooms.maxRoomsPerAddress = 0
        configuration.rooms.messagesPerAddressPerSecond = 0
        configuration.rooms.reactionsPerAddressPerSecond = 0
        // Two media workers whatever the machine, so the SFU suites cross workers; PARLOR_MEDIA_WORKERS=1 runs them on one.
        configuration.mediaWorkers = ProcessInfo.processInfo.environment["PARLOR_MEDIA_WORKERS"].flatMap { Int($0) } ?? 2
        return configuration
    }

    /// ICE servers as clients receive them: STUN URLs in one entry, TURN URLs with their credentials in another.
    public var resolvedICEServers: [ICEServer] {
        let stun = iceURLs.filter { !$0.hasPrefix("turn") }
        let turn = iceURLs.filter { $0.hasPrefix("turn") }
        var servers: [ICEServer] = []
        if !stun.isEmpty { servers.append(ICEServer(urls: stun)) }
        if !turn.isEmpty { servers.append(ICEServer(urls: turn, username: iceUsername, credential: iceCredential)) }
        return servers
    }

    public var resolvedRoomVisibility: RoomVisibility { roomVisibility ?? (access == .open ? .public : .members) }

    public var resolvedDatabasePath: String { databasePath ?? dataDirectory + "/parlor.db" }
    public var isInMemory: Bool { resolvedDatabasePath == ":memory:" }
}

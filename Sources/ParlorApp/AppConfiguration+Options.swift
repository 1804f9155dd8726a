import ParlorHTTP
import ParlorLoop
import ParlorRooms

/// One configuration option: its flag, its environment variable, its default and what it does.
public struct ConfigurationOption: Sendable {
    public let flag: String
    public let environment: String
    public let defaultValue: String
    public let help: String
    let apply: @Sendable (inout AppConfiguration, String) throws -> Void
    /// A switch takes no value: its presence means "true".
    var isSwitch = false
}

public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { message }
}

extension AppConfiguration {
    /// The documented options, in the order `parlor serve --help` and the README list them: the server's core
    /// options, then each concern's own group, kept in a file of its own.
    public static let options: [ConfigurationOption] = coreOptions + hostsOptions + shutdownOptions + webhookOptions
        + addressLimitOptions + audienceOptions + mediaOptions + replayOptions + srtpOptions + mediaWorkerOptions
        + recordingOptions + clusterLinkOptions

    static let coreOptions: [ConfigurationOption] = [
        ConfigurationOption(flag: "--dev", environment: "PARLOR_DEV", defaultValue: "off",
                            help: "dev preset: 127.0.0.1, :memory:, fixed JWT secret and admin token (printed at start), test mode, no abuse limits, 2 s grace period; flags after it override it; never in production",
                            apply: { configuration, value in
                                if !["0", "false", "off", "no"].contains(value.lowercased()) { configuration.applyDevPreset() }
                            },
                            isSwitch: true),
        option("--host", "PARLOR_HOST", "0.0.0.0", "address to listen on") { $0.http.host = $1 },
        option("--port", "PARLOR_PORT", "8080", "port to listen on; 0 picks a free one") { $0.http.port = try int($1, "--port", 0...65535) },
        option("--data-dir", "PARLOR_DATA_DIR", "./data", "directory for the database and the generated JWT secret") { $0.dataDirectory = $1 },
        option("--database", "PARLOR_DATABASE", "<data-dir>/parlor.db", "SQLite file, :memory: for no files at all, or postgres://USER@HOST:PORT/DB (libpq URI: sslmode, password, …)") { $0.databasePath = $1 },
        option("--tls-cert", "PARLOR_TLS_CERT", "unset", "PEM certificate chain: with --tls-key, serve HTTPS and WSS only (TLS 1.2+)") { $0.http.tlsCertificatePath = $1 },
        option("--tls-key", "PARLOR_TLS_KEY", "unset", "PEM private key of --tls-cert") { $0.http.tlsPrivateKeyPath = $1 },
        ConfigurationOption(flag: "--tls-self-signed", environment: "PARLOR_TLS_SELF_SIGNED", defaultValue: "off",
                            help: "serve HTTPS/WSS with a self-signed certificate made once in <data-dir> (browsers need HTTPS for the microphone on a LAN)",
                            apply: { configuration, value in configuration.tlsSelfSigned = !["0", "false", "off", "no"].contains(value.lowercased()) },
                            isSwitch: true),
        option("--jwt-secret", "PARLOR_JWT_SECRET", "generated", "HS256 secret; when unset, a random one is kept in <data-dir>/jwt-secret (0600), or in the database with PostgreSQL (shared by every node)") {
            try validateSecret($1, "--jwt-secret")
            $0.jwtSecret = $1
        },
        option("--token-ttl", "PARLOR_TOKEN_TTL", "21600", "seconds a token from /auth stays valid") { $0.tokenTTLSeconds = Int64(try int($1, "--token-ttl", 1...31_536_000)) },
        option("--loops", "PARLOR_LOOPS", "0", "event-loop threads; 0 means one per core") { $0.http.loopCount = try int($1, "--loops", 0...256) },
        option("--readers", "PARLOR_READERS", "2", "SQLite reader connections; with PostgreSQL, the pool beside the writer connection holds this many plus one") { $0.readerCount = try int($1, "--readers", 1...64) },
        option("--max-body-bytes", "PARLOR_MAX_BODY_BYTES", "65536", "largest HTTP request body (413 above)") { $0.http.limits.maxBodyBytes = try int($1, "--max-body-bytes", 0...(64 << 20)) },
        option("--header-timeout", "PARLOR_HEADER_TIMEOUT", "10", "seconds to receive a request head (slowloris guard)") { $0.http.headerTimeout = .seconds(try seconds($1, "--header-timeout")) },
        option("--body-timeout", "PARLOR_BODY_TIMEOUT", "30", "seconds to receive a request body after its head (408 and close after)") { $0.http.bodyTimeout = .seconds(try seconds($1, "--body-timeout")) },
        option("--idle-timeout", "PARLOR_IDLE_TIMEOUT", "60", "seconds an idle keep-alive connection stays open") { $0.http.idleTimeout = .seconds(try seconds($1, "--idle-timeout")) },
        option("--cors-origins", "PARLOR_CORS_ORIGINS", "none (same origin only)", "comma-separated origins allowed by CORS and on /ws besides the server's own; * allows any") { $0.http.corsAllowedOrigins = $1.split(separator: ",").map { $0.trimmingSpaces } },
        option("--grace-period", "PARLOR_GRACE_PERIOD", "20", "seconds a dropped member may resume before member:left reason dropped") { $0.rooms.gracePeriod = .seconds(try seconds($1, "--grace-period")) },
        option("--commit-window", "PARLOR_COMMIT_WINDOW", "1", "milliseconds: at most one rooms transaction starts per window, so under load the commands of a window share a commit and a wake-up (group commit); a command after a quiet window is applied at once; 0 never waits") { $0.rooms.commitWindow = .milliseconds(try int($1, "--commit-window", 0...100)) },
        option("--node-lease", "PARLOR_NODE_LEASE", "15", "with PostgreSQL: seconds a node's lease lasts without a heartbeat (one every third of it); then another node takes over its members, who drop after the grace period unless resumed") { $0.rooms.nodeLease = .seconds(try seconds($1, "--node-lease")) },
        option("--room-ttl", "PARLOR_ROOM_TTL", "300", "default seconds an empty room is kept") { $0.rooms.defaultRoomTTL = Int64(try int($1, "--room-ttl", 0...31_536_000)) },
        option("--max-room-ttl", "PARLOR_MAX_ROOM_TTL", "86400", "largest properties.ttl a room may ask for (400 above); open rooms stored with more get this at start") { $0.rooms.maxRoomTTL = Int64(try int($1, "--max-room-ttl", 0...31_536_000)) },
        option("--ping-interval", "PARLOR_PING_INTERVAL", "5", "seconds a WebSocket may go without a frame from the server; a silent peer is pinged this often") { $0.http.webSocket.pingInterval = .seconds(try seconds($1, "--ping-interval")) },
        option("--pong-timeout", "PARLOR_PONG_TIMEOUT", "15", "seconds of silence before a WebSocket is closed") { $0.http.webSocket.pongTimeout = .seconds(try seconds($1, "--pong-timeout")) },
        option("--max-message-bytes", "PARLOR_MAX_MESSAGE_BYTES", "65536", "largest WebSocket frame or message (close 1009 above)") {
            let value = try int($1, "--max-message-bytes", 1024...(16 << 20))
            $0.http.webSocket.maxFrameBytes = value
            $0.http.webSocket.maxMessageBytes = value
        },
        option("--max-request-bytes", "PARLOR_MAX_REQUEST_BYTES", "32768", "largest JSON request on the WebSocket (error reply above)") { $0.maxRequestBytes = try int($1, "--max-request-bytes", 256...(16 << 20)) },
        option("--max-output-bytes", "PARLOR_MAX_OUTPUT_BYTES", "1048576", "unsent bytes per connection: a WebSocket above it is closed with 1008, HTTP stops reading until they drain") {
            let bytes = try int($1, "--max-output-bytes", 1024...(1 << 30))
            $0.http.webSocket.maxPendingOutputBytes = bytes
            $0.http.maxPendingResponseBytes = bytes
        },
        option("--max-audio-senders", "PARLOR_MAX_AUDIO_SENDERS", "8", "members of a room sending audio at once (a mesh grows as n²); others listen") { $0.rooms.maxAudioSenders = try int($1, "--max-audio-senders", 1...64) },
        option("--media", "PARLOR_MEDIA", "sfu", "how audio flows: sfu (through this server's UDP media port, one stream up per speaker) or mesh (browser to browser)") {
            guard let mode = MediaMode(rawValue: $1.lowercased()) else { throw ConfigurationError(message: "--media must be sfu or mesh") }
            $0.rooms.mediaMode = mode
        },
        option("--media-port", "PARLOR_MEDIA_PORT", "same as --port", "UDP port of the media server with --media sfu (a free one with --port 0); open it in firewalls") { $0.mediaPort = try int($1, "--media-port", 0...65535) },
        option("--media-address", "PARLOR_MEDIA_ADDRESS", "interface addresses", "comma-separated addresses announced to clients for the media port: by default this machine's non-loopback IPv4 addresses, or --host when it names one; set the public one behind NAT or in Docker") {
            $0.mediaAddresses = $1.split(separator: ",").map { $0.trimmingSpaces }.filter { !$0.isEmpty }
        },
        option("--max-forwarded-speakers", "PARLOR_MAX_FORWARDED_SPEAKERS", "8", "receive slots per client (--media sfu): the loudest this many senders reach each listener") { $0.rooms.maxForwardedSpeakers = try int($1, "--max-forwarded-speakers", 1...32) },
        option("--ice-servers", "PARLOR_ICE_SERVERS", "none", "comma-separated stun:/turn: URLs handed to browsers (none needed on a LAN)") {
            let urls = $1.split(separator: ",").map { $0.trimmingSpaces }.filter { !$0.isEmpty }
            guard urls.allSatisfy({ $0.hasPrefix("stun:") || $0.hasPrefix("stuns:") || $0.hasPrefix("turn:") || $0.hasPrefix("turns:") }) else {
                throw ConfigurationError(message: "--ice-servers takes stun:, stuns:, turn: or turns: URLs")
            }
            $0.iceURLs = urls
        },
        option("--ice-username", "PARLOR_ICE_USERNAME", "none", "TURN username") { $0.iceUsername = $1 },
        option("--ice-credential", "PARLOR_ICE_CREDENTIAL", "none", "TURN credential") { $0.iceCredential = $1 },
        option("--turn-secret", "PARLOR_TURN_SECRET", "unset", "coturn static-auth-secret: with --turn-urls, each session gets TURN credentials valid for --turn-ttl") {
            guard $1.utf8.count >= 16 else { throw ConfigurationError(message: "--turn-secret must be at least 16 bytes long") }
            $0.turnSecret = $1
        },
        option("--turn-urls", "PARLOR_TURN_URLS", "none", "comma-separated turn:/turns: URLs of the TURN server sharing --turn-secret") {
            let urls = $1.split(separator: ",").map { $0.trimmingSpaces }.filter { !$0.isEmpty }
            guard !urls.isEmpty, urls.allSatisfy({ $0.hasPrefix("turn:") || $0.hasPrefix("turns:") }) else {
                throw ConfigurationError(message: "--turn-urls takes turn: or turns: URLs")
            }
            $0.turnURLs = urls
        },
        option("--turn-ttl", "PARLOR_TURN_TTL", "86400", "seconds the TURN credentials of --turn-secret stay valid (60 to 604800); make it outlast the longest call") {
            $0.turnTTLSeconds = Int64(try int($1, "--turn-ttl", 60...604_800))
        },
        option("--access", "PARLOR_ACCESS", "open", "open (any name gets a token), code (POST /auth needs the access code) or closed (no /auth; tokens from parlor token)") {
            guard let mode = AccessMode(rawValue: $1.lowercased()) else { throw ConfigurationError(message: "--access must be open, code or closed") }
            $0.access = mode
        },
        option("--room-visibility", "PARLOR_ROOM_VISIBILITY", "public if --access open, else members", "who may read a room's members and history: public, or members (users who are or were members of it)") {
            guard let visibility = RoomVisibility(rawValue: $1.lowercased()) else { throw ConfigurationError(message: "--room-visibility must be public or members") }
            $0.roomVisibility = visibility
        },
        option("--access-code", "PARLOR_ACCESS_CODE", "unset", "the code POST /auth requires in code mode") {
            guard $1.utf8.count >= 4 else { throw ConfigurationError(message: "--access-code must be at least 4 characters") }
            $0.accessCode = $1
        },
        option("--admin-token", "PARLOR_ADMIN_TOKEN", "unset", "enables the admin routes for Authorization: Bearer <token>; off when unset") {
            try validateSecret($1, "--admin-token")
            $0.adminToken = $1
        },
        option("--revoke-block", "PARLOR_REVOKE_BLOCK", "3600", "seconds a user revoked by an admin stays blocked: no token from /auth, none accepted; 0 turns it off") {
            $0.revokeBlockSeconds = Int64(try int($1, "--revoke-block", 0...31_536_000))
        },
        ConfigurationOption(flag: "--test-mode", environment: "PARLOR_TEST_MODE", defaultValue: "off",
                            help: "adds POST /admin/reset and forced connection drops (needs --admin-token); never in production",
                            apply: { configuration, value in configuration.testMode = !["0", "false", "off", "no"].contains(value.lowercased()) },
                            isSwitch: true),
        option("--metrics-address", "PARLOR_METRICS_ADDRESS", "off", "HOST:PORT of a second listener serving only /metrics (Prometheus, no authentication) and /healthz; keep it private. /metrics on the main port needs --admin-token") {
            $0.metricsAddress = try hostAndPort($1, "--metrics-address")
        },
        option("--webhook-urls", "PARLOR_WEBHOOK_URLS", "none", "comma-separated http:// or https:// URLs that receive room and member events as signed POSTs, kept in the database until delivered (https: certificate verified, see --webhook-ca-file)") {
            let urls = $1.split(separator: ",").map { $0.trimmingSpaces }.filter { !$0.isEmpty }
            guard urls.allSatisfy({ WebhookHTTPClient.Target($0) != nil }) else {
                throw ConfigurationError(message: "--webhook-urls takes http:// or https:// URLs with a host")
            }
            $0.webhookURLs = urls
        },
        option("--webhook-secret", "PARLOR_WEBHOOK_SECRET", "generated", "key of the HMAC-SHA256 in X-Parlor-Signature; when unset, a random one is kept in <data-dir>/webhook-secret (0600), or in the database with PostgreSQL") { $0.webhookSecret = $1 },
        option("--max-connections-per-ip", "PARLOR_MAX_CONNECTIONS_PER_IP", "1000", "open connections from one address (429 and close above); 0 = no limit") { $0.http.maxConnectionsPerIP = try int($1, "--max-connections-per-ip", 0...1_000_000) },
        option("--trusted-proxies", "PARLOR_TRUSTED_PROXIES", "none", "comma-separated CIDR blocks of reverse proxies whose Forwarded / X-Forwarded-For, -Proto, -Host give the client's address, scheme and host (a proxy on this machine: 127.0.0.1/32); none = trust no one") {
            guard let proxies = TrustedProxies(list: $1) else { throw ConfigurationError(message: "--trusted-proxies must be comma-separated CIDR blocks (10.0.0.0/8, ::1/128) or none") }
            $0.http.trustedProxies = proxies
        },
        option("--auth-rate", "PARLOR_AUTH_RATE", "10", "POST /auth per second per address, burst 3x (429 with Retry-After above); 0 = no limit") { $0.authRatePerIP = Double(try int($1, "--auth-rate", 0...1_000_000)) },
        option("--message-rate", "PARLOR_MESSAGE_RATE", "50", "WebSocket messages per second per connection, burst 2x (close 1008 above); 0 = no limit") { $0.messagesPerSecond = Double(try int($1, "--message-rate", 0...1_000_000)) },
        option("--frame-rate", "PARLOR_FRAME_RATE", "200", "WebSocket frames of any kind per second per connection, burst 2x (close 1008 above); 0 = no limit") { $0.http.webSocket.framesPerSecond = Double(try int($1, "--frame-rate", 0...1_000_000)) },
        option("--max-rooms-per-user", "PARLOR_MAX_ROOMS_PER_USER", "50", "open rooms one user may have created") { $0.rooms.maxRoomsPerUser = try int($1, "--max-rooms-per-user", 1...1_000_000) },
        option("--max-rooms-per-ip", "PARLOR_MAX_ROOMS_PER_IP", "20", "open rooms created from one client address (IPv6: one /64), with or without a token (429 above); 0 = no limit") { $0.rooms.maxRoomsPerAddress = try int($1, "--max-rooms-per-ip", 0...1_000_000) },
        option("--room-create-rate", "PARLOR_ROOM_CREATE_RATE", "10", "POST /rooms per minute per client address, burst 2x (429 with Retry-After above); 0 = no limit") { $0.roomCreationsPerMinute = Double(try int($1, "--room-create-rate", 0...1_000_000)) },
        option("--max-open-rooms", "PARLOR_MAX_OPEN_ROOMS", "10000", "open rooms on the server") { $0.rooms.maxOpenRooms = try int($1, "--max-open-rooms", 1...10_000_000) },
        option("--max-members-per-room", "PARLOR_MAX_MEMBERS_PER_ROOM", "1000", "members of one room (a room's max_members can only lower it)") { $0.rooms.maxMembersPerRoom = try int($1, "--max-members-per-room", 1...1_000_000) },
        option("--log-level", "PARLOR_LOG_LEVEL", "info", "debug, info, warn, error or off") {
            guard let level = Logger.Level(name: $1) else { throw ConfigurationError(message: "--log-level must be debug, info, warn, error or off") }
            $0.logLevel = level
        },
        option("--log-format", "PARLOR_LOG_FORMAT", "text", "text (logfmt) or json (one object per line: time, level, message, fields)") {
            guard let format = Logger.Format(rawValue: $1.lowercased()) else { throw ConfigurationError(message: "--log-format must be text or json") }
            $0.logFormat = format
        },
    ]

    /// Reads PARLOR_* variables, then flags (`--port 0` or `--port=0`).
    public static func parse(arguments: [String], environment: [String: String]) throws(ConfigurationError) -> AppConfiguration {
        var configuration = AppConfiguration()
        for option in options {
            // An empty variable counts as unset (compose files often pass VAR= through).
            if let value = environment[option.environment], !value.isEmpty { try apply(option, value, to: &configuration) }
        }
        var explicitHosts: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            var flag = argument
            var value: String?
            if let equals = argument.firstIndex(of: "=") {
                flag = String(argument[..<equals])
                value = String(argument[argument.index(after: equals)...])
            }
            guard let option = options.first(where: { $0.flag == flag }) else {
                throw ConfigurationError(message: "unknown option \(argument); see parlor serve --help")
            }
            if value == nil, option.isSwitch {
                value = "true"
            } else if value == nil {
                index += 1
                guard index < arguments.count else { throw ConfigurationError(message: "\(flag) needs a value") }
                value = arguments[index]
            }
            try apply(option, value!, to: &configuration)
            if option.flag == "--host" { explicitHosts.append(value!) }
            index += 1
        }
        if configuration.devMode, let host = (explicitHosts + [configuration.http.host]).first(where: { !isLoopback($0) }) {
            throw ConfigurationError(message: "--dev is for this machine only: it refuses --host \(host) (use 127.0.0.1, ::1 or localhost)")
        }
        return configuration
    }

    private static func apply(_ option: ConfigurationOption, _ value: String, to configuration: inout AppConfiguration) throws(ConfigurationError) {
        do {
            try option.apply(&configuration, value)
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw ConfigurationError(message: "\(option.flag): \(error)")
        }
    }

    public static func helpText() -> String {
        var text = "Usage: parlor serve [options]\n\nOptions (each also read from its environment variable; flags win):\n"
        for option in options {
            text += "  \(option.flag.padding(22))\(option.environment.padding(26))default \(option.defaultValue)\n"
            text += "      \(option.help)\n"
        }
        return text
    }

    static func option(_ flag: String, _ environment: String, _ defaultValue: String, _ help: String,
                               _ apply: @escaping @Sendable (inout AppConfiguration, String) throws -> Void) -> ConfigurationOption {
        ConfigurationOption(flag: flag, environment: environment, defaultValue: defaultValue, help: help, apply: apply)
    }

    static func int(_ text: String, _ flag: String, _ range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        guard let value = Int(text.trimmingSpaces), range.contains(value) else {
            throw ConfigurationError(message: "\(flag) must be a whole number from \(range.lowerBound) to \(range.upperBound), not \(text)")
        }
        return value
    }

    /// `127.0.0.1:9090`, `[::1]:9090` or `host:0` (a free port); `off` or empty: nil.
    static func hostAndPort(_ text: String, _ flag: String) throws(ConfigurationError) -> (host: String, port: Int)? {
        let text = text.trimmingSpaces
        if text.isEmpty || text.lowercased() == "off" { return nil }
        guard let colon = text.lastIndex(of: ":") else {
            throw ConfigurationError(message: "\(flag) must be HOST:PORT, not \(text)")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, host.contains(":") == text.hasPrefix("[") else {
            throw ConfigurationError(message: "\(flag) must be HOST:PORT (an IPv6 host in brackets), not \(text)")
        }
        return (host, try int(String(text[text.index(after: colon)...]), flag, 0...65535))
    }

    static func seconds(_ text: String, _ flag: String) throws(ConfigurationError) -> Double {
        guard let value = Double(text.trimmingSpaces), value > 0, value <= 86_400 * 365 else {
            throw ConfigurationError(message: "\(flag) must be a positive number of seconds, not \(text)")
        }
        return value
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs. Works on the UTF-8 bytes: it runs on every token of every request.
    var trimmingSpaces: String {
        let text = String(self)
        let bytes = text.utf8
        // Usually nothing to trim: no second copy.
        guard let first = bytes.first, let last = bytes.last, first == 0x20 || first == 0x09 || last == 0x20 || last == 0x09 else { return text }
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start = bytes.index(after: start) }
        while end > start {
            let before = bytes.index(before: end)
            guard bytes[before] == 0x20 || bytes[before] == 0x09 else { break }
            end = before
        }
        return String(text[start..<end])
    }

    func padding(_ width: Int) -> String {
        count >= width ? String(self) + " " : String(self) + String(repeating: " ", count: width - count)
    }
}

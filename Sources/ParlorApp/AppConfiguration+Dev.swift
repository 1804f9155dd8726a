import ParlorLoop

/// `parlor serve --dev`: one switch for local development and integration tests, never for production.
extension AppConfiguration {
    /// The fixed HS256 secret of the dev preset (`parlor token --dev` mints with it).
    public static let devJWTSecret = "parlor-dev-jwt-secret-not-for-production"
    /// The fixed admin token of the dev preset (also enables the test-mode routes).
    public static let devAdminToken = "parlor-dev-admin-token"
    /// Seconds a dropped member may resume under the dev preset: short, so scripts see drops quickly.
    public static let devGracePeriodSeconds = 2.0

    /// Applies the dev preset: loopback only, in memory, fixed secrets, test mode, no abuse limits, short grace.
    /// Flags after `--dev` override what it sets.
    public mutating func applyDevPreset() {
        devMode = true
        http.host = "127.0.0.1"
        databasePath = ":memory:"
        jwtSecret = Self.devJWTSecret
        adminToken = Self.devAdminToken
        testMode = true
        authRatePerIP = 0
        messagesPerSecond = 0
        http.webSocket.framesPerSecond = 0
        http.maxConnectionsPerIP = 0
        roomCreationsPerMinute = 0
        rooms.maxRoomsPerAddress = 0
        rooms.maxRoomsPerUser = 1_000_000
        rooms.messagesPerAddressPerSecond = 0
        rooms.reactionsPerAddressPerSecond = 0
        // Every client of a dev server comes from 127.0.0.1: the per-address and per-user media limits would be the test's own.
        rooms.maxMediaSessionsPerUser = 0
        rooms.maxMediaSessionsPerAddress = 0
        rooms.mediaOfferRate = 0
        rooms.gracePeriod = .seconds(Self.devGracePeriodSeconds)
    }

    /// The dev preset as a configuration (port 8080, like `parlor serve --dev`).
    public static func dev() -> AppConfiguration {
        var configuration = AppConfiguration()
        configuration.applyDevPreset()
        return configuration
    }

    /// The lines `parlor serve --dev` prints at start, so nobody mistakes it for production.
    public var devBanner: String {
        """
        parlor: DEV MODE: not for production. Loopback only, in memory unless --database, no abuse limits, test mode on.
        parlor: dev JWT secret \(jwtSecret ?? "-") (parlor token --dev --name NAME mints tokens for it)
        parlor: dev admin token \(adminToken ?? "-"); grace period \(rooms.gracePeriod.seconds) s

        """
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}

/// Secrets are checked by this one rule everywhere: the flag parser, buildApplication and `parlor token`.
extension AppConfiguration {
    public static let minimumSecretBytes = 16

    /// Throws unless `value` (the value of `flag`) is at least 16 bytes long.
    public static func validateSecret(_ value: String, _ flag: String) throws(ConfigurationError) {
        guard value.utf8.count >= minimumSecretBytes else {
            throw ConfigurationError(message: "\(flag) must be at least \(minimumSecretBytes) bytes long")
        }
    }
}

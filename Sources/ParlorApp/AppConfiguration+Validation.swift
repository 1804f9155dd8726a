extension AppConfiguration {
    /// Checks every option combination that cannot work, before anything is opened or created,
    /// so a bad configuration leaves no database file, secret file or open handle behind.
    func validate() throws(ConfigurationError) {
        if access == .code, accessCode == nil {
            throw ConfigurationError(message: "--access code needs PARLOR_ACCESS_CODE")
        }
        // --tls-self-signed without --tls-cert supplies both files itself.
        let selfSignedSuppliesBoth = tlsSelfSigned && http.tlsCertificatePath == nil
        if !selfSignedSuppliesBoth, (http.tlsCertificatePath == nil) != (http.tlsPrivateKeyPath == nil) {
            throw ConfigurationError(message: "TLS needs both --tls-cert and --tls-key")
        }
        if rooms.defaultRoomTTL > rooms.maxRoomTTL {
            throw ConfigurationError(message: "--room-ttl (\(rooms.defaultRoomTTL)) must not exceed --max-room-ttl (\(rooms.maxRoomTTL))")
        }
        if (turnSecret == nil) != turnURLs.isEmpty {
            throw ConfigurationError(message: "TURN credentials need both --turn-secret and --turn-urls")
        }
        // Listeners bind with SO_REUSEPORT, so the same port twice would not fail: the kernel would split clients between them.
        if let metrics = metricsAddress, metrics.port != 0, metrics.port == http.port {
            throw ConfigurationError(message: "--metrics-address must not use the main port \(metrics.port)")
        }
        if let adminToken { try Self.validateSecret(adminToken, "PARLOR_ADMIN_TOKEN") }
        if testMode, adminToken == nil {
            throw ConfigurationError(message: "--test-mode needs PARLOR_ADMIN_TOKEN: its routes are admin routes")
        }
        if let jwtSecret { try Self.validateSecret(jwtSecret, "PARLOR_JWT_SECRET") }
        _ = try postgresURL
        try validateClusterLink()
    }
}

import ParlorMedia

extension AppConfiguration {
    /// Media links between nodes on one PostgreSQL database (issue 41): where a node takes them and the secret that
    /// signs the nodes' link offers.
    static let clusterLinkOptions: [ConfigurationOption] = [
        option("--cluster-media-address", "PARLOR_CLUSTER_MEDIA_ADDRESS", "off", "with PostgreSQL: numeric HOST:PORT (UDP) this node binds for media links from other nodes and publishes for them to send to (so it must be an address they reach, not 0.0.0.0); port 0 picks a free one; off: no link socket") {
            $0.clusterMediaAddress = try clusterMediaAddress($1)
        },
        option("--cluster-secret", "PARLOR_CLUSTER_SECRET", "generated", "signs the nodes' media link offers, at least 32 characters, the same on every node; when unset, a random one is kept in the database (shared by every node)") {
            guard $1.utf8.count >= minimumClusterSecretBytes else {
                throw ConfigurationError(message: "--cluster-secret must be at least \(minimumClusterSecretBytes) characters long")
            }
            $0.clusterSecret = $1
        },
    ]

    static let minimumClusterSecretBytes = 32

    static func clusterMediaAddress(_ text: String) throws(ConfigurationError) -> TransportAddress? {
        guard let (host, port) = try hostAndPort(text, "--cluster-media-address") else { return nil }
        guard let address = TransportAddress(host: host, port: UInt16(port)) else {
            throw ConfigurationError(message: "--cluster-media-address takes a numeric IPv4 or IPv6 address, not \(host)")
        }
        guard address.addressBytes.contains(where: { $0 != 0 }) else {
            throw ConfigurationError(message: "--cluster-media-address must be an address other nodes reach, not the wildcard \(host)")
        }
        return address
    }

    /// Links exist between nodes on one PostgreSQL database: with SQLite there is no other node.
    func validateClusterLink() throws(ConfigurationError) {
        if clusterMediaAddress != nil, try postgresURL == nil {
            throw ConfigurationError(message: "--cluster-media-address needs --database postgres://… (media links join nodes on one PostgreSQL database)")
        }
    }
}

import ParlorLoop
import ParlorMedia
import ParlorRooms

extension AppConfiguration {
    /// The media server's socket and candidates (--media sfu): it binds `--host` on `--media-port` (default: the
    /// HTTP port's number, a free port with --port 0) and announces `--media-address`, or else this machine's
    /// non-loopback IPv4 addresses when bound to every interface, or the bound address itself. A loopback --host with
    /// non-loopback --media-address (a reverse proxy in front of HTTP) binds the media port on every interface.
    func mediaServerConfiguration(httpPort: Int) throws(ConfigurationError) -> MediaServerConfiguration {
        var host = http.host == "localhost" ? "127.0.0.1" : http.host
        let port = UInt16(mediaPort ?? (http.port == 0 ? 0 : httpPort))
        var announced: [TransportAddress] = []
        for text in mediaAddresses {
            guard let address = TransportAddress(host: text, port: port) else {
                throw ConfigurationError(message: "--media-address takes numeric IPv4 or IPv6 addresses, not \(text)")
            }
            announced.append(address)
        }
        // Behind a reverse proxy HTTP listens on loopback, but UDP is not proxied: with announced addresses that are
        // not loopback, the media port listens on every interface so clients reach it there.
        if host == "127.0.0.1" || host == "::1", announced.contains(where: { $0.host != "127.0.0.1" && $0.host != "::1" }) {
            host = announced.contains(where: \.isIPv6) ? "::" : "0.0.0.0"
        }
        guard let bind = TransportAddress(host: host, port: port) else {
            throw ConfigurationError(message: "--media sfu needs --host to be a numeric address (or localhost), not \(http.host)")
        }
        if announced.isEmpty {
            let everywhere = bind.host == "0.0.0.0" || bind.host == "::"
            let local = everywhere ? SelfSignedCertificate.localAddresses().compactMap { TransportAddress(host: $0, port: port) } : [bind]
            announced = local.isEmpty ? [TransportAddress(host: "127.0.0.1", port: port)!] : local
        }
        var configuration = MediaServerConfiguration(bind: bind, announced: announced, slots: rooms.maxForwardedSpeakers)
        configuration.setupTimeout = rooms.mediaSetupTimeout
        configuration.srtpProfiles = srtpProfiles
        configuration.workers = mediaWorkers
        return configuration
    }
}

import ParlorLoop
import ParlorMedia
import ParlorRooms

extension AppConfiguration {
    /// The media server's socket and candidates (--media sfu): it binds `--host` on `--media-port` (default: the
    /// HTTP port's number, a free port with --port 0) and announces `--media-address`, or else this machine's
    /// non-loopback IPv4 addresses when bound to every interface, or the bound address itself.
    func mediaServerConfiguration(httpPort: Int) throws(ConfigurationError) -> MediaServerConfiguration {
        let host = http.host == "localhost" ? "127.0.0.1" : http.host
        let port = UInt16(mediaPort ?? (http.port == 0 ? 0 : httpPort))
        guard let bind = TransportAddress(host: host, port: port) else {
            throw ConfigurationError(message: "--media sfu needs --host to be a numeric address (or localhost), not \(http.host)")
        }
        var announced: [TransportAddress] = []
        for text in mediaAddresses {
            guard let address = TransportAddress(host: text, port: port) else {
                throw ConfigurationError(message: "--media-address takes numeric IPv4 or IPv6 addresses, not \(text)")
            }
            announced.append(address)
        }
        if announced.isEmpty {
            let everywhere = bind.host == "0.0.0.0" || bind.host == "::"
            let local = everywhere ? SelfSignedCertificate.localAddresses().compactMap { TransportAddress(host: $0, port: port) } : [bind]
            announced = local.isEmpty ? [TransportAddress(host: "127.0.0.1", port: port)!] : local
        }
        return MediaServerConfiguration(bind: bind, announced: announced, slots: rooms.maxForwardedSpeakers)
    }
}

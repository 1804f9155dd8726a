import ParlorHTTP

extension AppConfiguration {
    /// The names the server answers to: the Host allowlist of /ws and state-changing routes against DNS rebinding.
    static let hostsOptions: [ConfigurationOption] = [
        option("--public-url", "PARLOR_PUBLIC_URL", "unset", "the URL people open, e.g. https://rooms.example.com: its host is allowed (see --allowed-hosts) and it is the server's own origin on /ws") {
            guard let url = PublicURL($1) else {
                throw ConfigurationError(message: "--public-url must be an http:// or https:// URL with a host, e.g. https://rooms.example.com, not \($1)")
            }
            $0.http.publicURL = url
            $0.http.allowedHosts.insert(url.host)
        },
        option("--allowed-hosts", "PARLOR_ALLOWED_HOSTS", "none (IP literals, localhost, this machine's name, --public-url's host)", "comma-separated further host names accepted in the Host of /ws and POST/PUT/PATCH/DELETE (421 otherwise); * = any host (no DNS rebinding guard)") {
            for name in $1.split(separator: ",").map({ $0.trimmingSpaces }) where !name.isEmpty {
                if name == "*" {
                    $0.http.allowedHosts.allowsAnyHost = true
                } else if name != "none" {
                    guard !name.contains("/"), !name.contains(" ") else {
                        throw ConfigurationError(message: "--allowed-hosts takes host names (rooms.example.com), not \(name)")
                    }
                    $0.http.allowedHosts.insert(name)
                }
            }
        },
    ]
}

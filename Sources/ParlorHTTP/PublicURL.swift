/// `--public-url`: the scheme and authority people reach the server at (a proxy in front may end TLS).
public struct PublicURL: Sendable, Equatable {
    public let scheme: String
    /// Host and port as a browser's Origin has them (`rooms.example.com`, `rooms.example.com:8443`), lowercased.
    public let authority: String
    /// The host alone (`[v6]` without brackets).
    public let host: String

    /// `http://` or `https://`, a host, an optional port, and an optional path (ignored); nil otherwise.
    public init?(_ text: String) {
        let lowered = text.lowercased()
        guard let schemeEnd = lowered.range(of: "://") else { return nil }
        scheme = String(lowered[..<schemeEnd.lowerBound])
        guard scheme == "http" || scheme == "https" else { return nil }
        let rest = lowered[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty, !authority.contains("@"), authority.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else { return nil }
        var host = authority
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let port = authority[authority.index(after: close)...]
            guard port.isEmpty || port.first == ":" && Self.isPort(port.dropFirst()) else { return nil }
        } else if let colon = authority.firstIndex(of: ":") {
            guard Self.isPort(authority[authority.index(after: colon)...]) else { return nil }
            host = authority[..<colon]
        }
        guard !host.isEmpty else { return nil }
        self.host = String(host)
        self.authority = String(authority)
    }

    private static func isPort(_ text: Substring) -> Bool {
        !text.isEmpty && text.count <= 5 && text.allSatisfy { $0.isASCII && $0.isNumber } && Int(text)! <= 65535
    }
}

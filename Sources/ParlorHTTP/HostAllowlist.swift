#if canImport(Glibc)
import Glibc
#endif

/// The names this server answers to, for the `Host` of WebSocket upgrades and state-changing requests. DNS
/// rebinding points a name the attacker owns at us, so a visitor's browser sends `Host: evil.example` with a matching
/// `Origin`: same-origin by every other check. An IP literal cannot be rebound, so IP access (a LAN, Docker) always
/// passes; names must be listed: `localhost`, this machine's host name, `--public-url`'s and `--allowed-hosts`'.
public struct HostAllowlist: Sendable, Equatable {
    /// Lowercased names without port or trailing dot.
    public private(set) var names: Set<String>
    /// `--allowed-hosts *`: no check at all.
    public var allowsAnyHost = false

    /// `localhost`, the machine's host name (and `<name>.local`, its mDNS name) and `names`.
    public init(names: [String] = [], machineHostName: String? = HostAllowlist.machineHostName()) {
        self.names = ["localhost"]
        if let machine = machineHostName, !machine.isEmpty {
            insert(machine)
            if !machine.contains(".") { insert(machine + ".local") }
        }
        for name in names { insert(name) }
    }

    public mutating func insert(_ name: String) {
        if let normalized = Self.normalized(Substring(name)) { names.insert(normalized) }
    }

    /// Whether a request with this `Host` value (`name`, `name:port`, `1.2.3.4:port`, `[v6]:port`) may proceed.
    public func allows(_ host: String) -> Bool {
        if allowsAnyHost { return true }
        let authority = Substring(host)
        if authority.hasPrefix("[") {
            // An IPv6 literal: `[addr]` or `[addr]:port`, and nothing else.
            guard let close = authority.firstIndex(of: "]") else { return false }
            let rest = authority[authority.index(after: close)...]
            guard rest.isEmpty || Self.isPort(rest.dropFirst()) && rest.first == ":" else { return false }
            return IPAddress(authority[authority.index(after: authority.startIndex)..<close]) != nil
        }
        var name = authority
        if let colon = authority.lastIndex(of: ":") {
            guard Self.isPort(authority[authority.index(after: colon)...]) else { return false }
            name = authority[..<colon]
        }
        if !name.contains(":"), IPAddress(name) != nil { return true }  // IPv4 (an unbracketed v6 is not a Host)
        guard let normalized = Self.normalized(name) else { return false }
        return names.contains(normalized)
    }

    private static func isPort(_ text: Substring) -> Bool {
        !text.isEmpty && text.count <= 5 && text.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// Lowercased, one trailing dot dropped (`localhost.` is `localhost`); nil when empty.
    static func normalized(_ name: Substring) -> String? {
        let trimmed = name.hasSuffix(".") ? name.dropLast() : name
        guard !trimmed.isEmpty else { return nil }
        return trimmed.lowercased()
    }

    /// gethostname(2), or nil.
    public static func machineHostName() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? nil : name
    }
}

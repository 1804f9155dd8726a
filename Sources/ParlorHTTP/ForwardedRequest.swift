import ParlorCodec

/// Who a request really comes from, and how it reached the proxy in front of us: the client address, scheme and
/// host from `Forwarded` (RFC 7239) or `X-Forwarded-For/-Proto/-Host`, believed only when the TCP peer is a trusted
/// proxy. Resolved once per request head, so the access log, rate limits and connection caps see one value.
public struct ForwardedRequest: Sendable, Equatable {
    /// The client's address in canonical form (the TCP peer's own when nothing trustworthy says otherwise).
    public var clientIP: String
    /// "http" or "https" as the client used it, when a trusted proxy said so.
    public var scheme: String?
    /// The Host the client asked for, when a trusted proxy said so.
    public var host: String?

    public init(clientIP: String, scheme: String? = nil, host: String? = nil) {
        self.clientIP = clientIP
        self.scheme = scheme
        self.host = host
    }

    /// Resolves the headers of a request that arrived from `peerIP`. Headers from an untrusted peer are ignored;
    /// `Forwarded` wins over `X-Forwarded-*` when both are present.
    public static func resolve(peerIP: String, headers: HTTPHeaders, trusted: TrustedProxies) -> ForwardedRequest {
        let peer = IPAddress(peerIP)
        let peerText = peer?.description ?? peerIP
        guard let peer, trusted.contains(peer) else { return ForwardedRequest(clientIP: peerText) }
        return resolve(trustedPeer: peerText, headers: headers, trusted: trusted)
    }

    /// Resolves the headers of a request from a trusted proxy whose canonical address is `peerText` (parsed and
    /// checked once per connection by the caller: this runs on every request).
    public static func resolve(trustedPeer peerText: String, headers: HTTPHeaders, trusted: TrustedProxies) -> ForwardedRequest {
        // Loopback is trusted by default, and most requests from it carry none of these headers: one pass over the
        // names decides that, instead of four lookups and their arrays (2,800 instructions per GET /rooms).
        guard headers.contains(where: { isForwardingHeader($0.name) }) else { return ForwardedRequest(clientIP: peerText) }
        let forwarded = headers.values("Forwarded")
        if !forwarded.isEmpty {
            return fromForwarded(forwarded.joined(separator: ","), peer: peerText, trusted: trusted)
        }
        var result = ForwardedRequest(clientIP: peerText)
        let hops = headers.values("X-Forwarded-For").joined(separator: ",").split(separator: ",").map { $0.trimmingCharacters(in: " \t") }
        if !hops.isEmpty {
            result.clientIP = rightmostUntrusted(hops.map { node($0) }, peer: peerText, trusted: trusted).map(\.description) ?? peerText
        }
        result.scheme = headers["X-Forwarded-Proto"].flatMap { scheme(firstElement($0)) }
        result.host = headers["X-Forwarded-Host"].flatMap { host(firstElement($0)) }
        return result
    }

    /// True for `Forwarded` and every `X-Forwarded-…` name, in any case: the only headers `resolve` reads.
    static func isForwardingHeader(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { bytes in
            // `| 0x20` lowercases ASCII letters and leaves "-" alone; a false match only costs the full lookups.
            func starts(with prefix: StaticString) -> Bool {
                guard bytes.count >= prefix.utf8CodeUnitCount else { return false }
                for index in 0..<prefix.utf8CodeUnitCount where bytes[index] | 0x20 != prefix.utf8Start[index] { return false }
                return true
            }
            return (bytes.count == 9 && starts(with: "forwarded")) || starts(with: "x-forwarded-")
        }
    }

    // MARK: Forwarded (RFC 7239)

    static func fromForwarded(_ value: String, peer: String, trusted: TrustedProxies) -> ForwardedRequest {
        let elements = ForwardedHeaderParser.elements(value)
        var result = ForwardedRequest(clientIP: peer)
        guard let elements, !elements.isEmpty else { return result }  // malformed: as if the proxy said nothing
        // Walk from the nearest hop outwards: skip our own proxies, stop at the first address we cannot vouch for.
        var chosen = elements.count - 1
        var client: IPAddress?
        for index in elements.indices.reversed() {
            chosen = index
            guard let address = elements[index]["for"].flatMap({ node($0) }) else { client = nil; break }
            client = address
            if !trusted.contains(address) { break }
        }
        result.clientIP = client?.description ?? peer
        result.scheme = elements[chosen]["proto"].flatMap { scheme($0) }
        result.host = elements[chosen]["host"].flatMap { host($0) }
        return result
    }

    /// The rightmost hop that is not one of our proxies (all trusted: the leftmost); nil when a hop is not an address.
    static func rightmostUntrusted(_ hops: [IPAddress?], peer: String, trusted: TrustedProxies) -> IPAddress? {
        var last: IPAddress?
        for hop in hops.reversed() {
            guard let hop else { return nil }
            last = hop
            if !trusted.contains(hop) { return hop }
        }
        return last
    }

    /// A node: `192.0.2.1`, `192.0.2.1:4711`, `[2001:db8::1]`, `[2001:db8::1]:4711` or a bare IPv6 address;
    /// nil for `unknown`, obfuscated identifiers (`_hidden`) and anything else.
    static func node(_ text: Substring) -> IPAddress? {
        guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && rest.count > 1) else { return nil }
            return IPAddress(text[text.index(after: text.startIndex)..<close])
        }
        let colons = text.reduce(0) { $0 + ($1 == ":" ? 1 : 0) }
        if colons == 1, let colon = text.firstIndex(of: ":") { return IPAddress(text[..<colon]) }
        return IPAddress(text)
    }

    static func scheme(_ text: Substring) -> String? {
        switch text.lowercased() {
        case "http": "http"
        case "https": "https"
        default: nil
        }
    }

    /// A host[:port] made of the characters a Host header may hold, at most 255 bytes; nil otherwise.
    static func host(_ text: Substring) -> String? {
        guard !text.isEmpty, text.utf8.count <= 255 else { return nil }
        let allowed = text.utf8.allSatisfy { byte in
            (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39)
                || byte == 0x2D || byte == 0x2E || byte == 0x3A || byte == 0x5B || byte == 0x5D || byte == 0x5F
        }
        return allowed ? String(text) : nil
    }

    private static func firstElement(_ value: String) -> Substring {
        (value.split(separator: ",").first ?? "").trimmingCharacters(in: " \t")
    }
}

/// Splits a `Forwarded` value into elements of lowercase parameter names and unquoted values.
enum ForwardedHeaderParser {
    /// nil when the value is malformed (an unterminated quote, a pair without `=`, too many elements).
    static func elements(_ value: String) -> [[String: Substring]]? {
        var elements: [[String: Substring]] = []
        var current: [String: Substring] = [:]
        var pair = Substring()
        var text = Substring(value)
        var unquoted = ""
        func finishPair() -> Bool {
            let trimmed = pair.trimmingCharacters(in: " \t")
            pair = ""
            if trimmed.isEmpty && unquoted.isEmpty { return true }
            guard let equals = trimmed.firstIndex(of: "=") else { return false }
            let name = trimmed[..<equals].trimmingCharacters(in: " \t").lowercased()
            guard !name.isEmpty else { return false }
            let raw = trimmed[trimmed.index(after: equals)...]
            current[name] = unquoted.isEmpty ? raw.trimmingCharacters(in: " \t") : Substring(unquoted)
            unquoted = ""
            return true
        }
        var quotedValue = false
        while let character = text.first {
            text = text.dropFirst()
            switch character {
            case "\"":
                // A quoted-string value: read to the closing quote, honouring backslash escapes.
                var closed = false
                var value = ""
                while let inner = text.first {
                    text = text.dropFirst()
                    if inner == "\\" {
                        guard let escaped = text.first else { return nil }
                        value.append(escaped)
                        text = text.dropFirst()
                    } else if inner == "\"" {
                        closed = true
                        break
                    } else {
                        value.append(inner)
                    }
                }
                guard closed else { return nil }
                unquoted = value
                quotedValue = true
            case ";":
                guard finishPair() else { return nil }
                quotedValue = false
            case ",":
                guard finishPair() else { return nil }
                quotedValue = false
                if !current.isEmpty { elements.append(current) }
                current = [:]
                guard elements.count <= 64 else { return nil }
            default:
                guard !quotedValue else { if character == " " || character == "\t" { continue } else { return nil } }
                pair.append(character)
            }
        }
        guard finishPair() else { return nil }
        if !current.isEmpty { elements.append(current) }
        return elements
    }
}

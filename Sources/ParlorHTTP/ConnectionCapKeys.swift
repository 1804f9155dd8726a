/// The per-address connection-cap keys one connection counts under: its peer's address (or, for a trusted proxy,
/// the proxy's key) and, behind a proxy, the client its first request names. Two at most, kept inline: a `[String]`
/// cost every connection a 64-byte allocation (heaptrack at 10,000 WebSockets: 0.6 MB).
struct ConnectionCapKeys {
    private var first: String?
    private var second: String?

    var isEmpty: Bool { first == nil }

    /// A connection counts under its peer once and under a forwarded client once; a third key is a bug.
    mutating func append(_ key: String) {
        if first == nil {
            first = key
        } else {
            precondition(second == nil, "a connection counts under two connection-cap keys at most")
            second = key
        }
    }

    /// The keys in the order they were added.
    func forEach(_ body: (String) -> Void) {
        if let first { body(first) }
        if let second { body(second) }
    }
}

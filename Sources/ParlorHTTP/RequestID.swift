import Synchronization

/// Each request's id: the client's `X-Request-Id` when it is short and made of safe characters (so a proxy's id
/// follows the request through), otherwise `<process prefix>-<counter>`, unique across restarts.
enum RequestID {
    private static let prefix: String = {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt64
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }()
    private static let counter = Atomic<UInt64>(0)

    static func make(incoming: String?) -> String {
        if let incoming, isSafe(incoming) { return incoming }
        let number = counter.add(1, ordering: .relaxed).newValue
        return prefix + "-" + String(number, radix: 16)
    }

    /// 1 to 64 bytes of letters, digits, `-`, `_`, `.`, `:`: nothing that could split a log line or a header.
    static func isSafe(_ value: String) -> Bool {
        let utf8 = value.utf8
        guard !utf8.isEmpty, utf8.count <= 64 else { return false }
        return utf8.allSatisfy { byte in
            (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39)
                || byte == 0x2D || byte == 0x5F || byte == 0x2E || byte == 0x3A
        }
    }
}

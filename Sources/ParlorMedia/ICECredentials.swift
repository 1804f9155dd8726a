import COpenSSL

/// One side's ICE username fragment and password (RFC 8445 §5.3), as the SDP's `a=ice-ufrag` and `a=ice-pwd` carry.
public struct ICECredentials: Sendable, Hashable {
    public var usernameFragment: String
    public var password: String

    /// Fresh random credentials: 8 characters of ufrag (24 bits of entropy minimum per RFC 8445), 24 of password
    /// (128 bits minimum), from the ice-char alphabet.
    public static func random() -> ICECredentials {
        ICECredentials(usernameFragment: randomICEChars(8), password: randomICEChars(24))
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func randomICEChars(_ count: Int) -> String {
        var random = [UInt8](repeating: 0, count: count)
        precondition(RAND_bytes(&random, Int32(count)) == 1, "RAND_bytes failed")
        return String(decoding: random.map { alphabet[Int($0 & 63)] }, as: UTF8.self)
    }
}

/// Pieces of the opening handshake (RFC 6455 §4).
public enum WebSocketHandshake {
    /// Appended to the client's key before hashing to form Sec-WebSocket-Accept (RFC 6455 §1.3).
    public static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// Whether `key` is a valid Sec-WebSocket-Key: base64 that decodes to exactly 16 bytes.
    public static func isValidKey(_ key: String) -> Bool {
        Base64.decode(key)?.count == 16
    }

    /// The Sec-WebSocket-Accept value for `key`: base64(SHA-1(key + GUID)).
    /// Uses the small built-in SHA-1, meant for the client checking the server's answer.
    public static func acceptValue(forKey key: String) -> String {
        Base64.encode(SHA1.hash(Array((key + guid).utf8)))
    }
}

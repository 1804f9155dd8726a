/// Pieces of the opening handshake (RFC 6455 §4).
public enum WebSocketHandshake {
    /// Appended to the client's key before hashing to form Sec-WebSocket-Accept (RFC 6455 §1.3).
    public static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// Whether `key` is a valid Sec-WebSocket-Key: base64 that decodes to exactly 16 bytes.
    public static func isValidKey(_ key: String) -> Bool {
        Base64.decode(key)?.count == 16
    }

    /// The Sec-WebSocket-Accept value for `key`: base64(SHA-1(key + GUID)). The SHA-1 is the caller's, from a crypto
    /// library (OpenSSL on the server; `SHA1Digest` in ParlorClient), so this module stays without dependencies.
    public static func acceptValue(forKey key: String, sha1: ([UInt8]) -> [UInt8]) -> String {
        Base64.encode(sha1(Array((key + guid).utf8)))
    }
}

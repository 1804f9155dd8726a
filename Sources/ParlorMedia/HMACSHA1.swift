import COpenSSL

/// HMAC-SHA1 through OpenSSL, for STUN's MESSAGE-INTEGRITY (RFC 8489 §14.5).
enum HMACSHA1 {
    static let length = 20

    static func authenticationCode(key: [UInt8], message: ArraySlice<UInt8>) -> [UInt8] {
        var code = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        key.withUnsafeBytes { key in
            message.withUnsafeBytes { message in
                _ = HMAC(EVP_sha1(), key.baseAddress, Int32(key.count), message.baseAddress?.assumingMemoryBound(to: UInt8.self),
                         message.count, &code, &length)
            }
        }
        return Array(code.prefix(Int(length)))
    }

    /// Compares in time independent of where the codes differ.
    static func equal(_ a: ArraySlice<UInt8>, _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}

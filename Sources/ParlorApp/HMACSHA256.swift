import COpenSSL

/// HMAC-SHA256 (OpenSSL) of `message` under `key`: what signs webhooks (X-Parlor-Signature) and the nodes' proxied
/// download requests (X-Parlor-Node-Auth).
func hmacSHA256(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
    var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
    var length: UInt32 = 0
    _ = key.withUnsafeBytes { key in
        message.withUnsafeBytes { data in
            HMAC(EVP_sha256(), key.baseAddress, Int32(key.count), data.baseAddress?.assumingMemoryBound(to: UInt8.self),
                 data.count, &digest, &length)
        }
    }
    return Array(digest.prefix(Int(length)))
}

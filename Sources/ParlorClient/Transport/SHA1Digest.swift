#if canImport(CryptoKit)
import CryptoKit
#else
import COpenSSL
#endif

/// SHA-1 from the platform's crypto library, for checking the server's Sec-WebSocket-Accept (RFC 6455 §4.1): CryptoKit
/// on Apple platforms, OpenSSL's libcrypto elsewhere. A fingerprint here, not security; still not ours to write.
enum SHA1Digest {
    static func hash(_ bytes: [UInt8]) -> [UInt8] {
        #if canImport(CryptoKit)
        Array(Insecure.SHA1.hash(data: bytes))
        #else
        var digest = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
        _ = bytes.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { output in
                SHA1(input.baseAddress, input.count, output.baseAddress)
            }
        }
        return digest
        #endif
    }
}

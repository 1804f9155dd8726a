import COpenSSL
import ParlorCodec

/// SHA-256 through OpenSSL: migration fingerprints, and random 256-bit claim secrets stored as their hash
/// (UserDirectory; the hash is looked up, never compared byte by byte with a secret).
public enum SHA256 {
    /// Lowercase hex digest of `message`.
    public static func hexDigest(of message: some Sequence<UInt8>) -> String {
        Hex.encode(digest(of: message))
    }

    static func digest(of message: some Sequence<UInt8>) -> [UInt8] {
        let bytes = Array(message)
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        // EVP_Digest cannot fail for SHA-256 on memory it is given (no engine, no allocation that can be refused
        // short of the process being out of memory); a failure would leave the all-zero digest, so it is checked.
        let succeeded = bytes.withUnsafeBytes { input in
            digest.withUnsafeMutableBufferPointer { output in
                EVP_Digest(input.baseAddress, input.count, output.baseAddress, nil, EVP_sha256(), nil) == 1
            }
        }
        precondition(succeeded, "EVP_Digest(SHA-256) failed")
        return digest
    }
}

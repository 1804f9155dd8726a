import COpenSSL

/// HMAC-SHA256 (RFC 2104, vectors in RFC 4231) through OpenSSL's one-shot `HMAC`: what signs link offers.
/// (ParlorApp has the same function for webhooks and node-to-node download requests.)
enum HMACSHA256 {
    static let digestLength = 32

    static func authenticate(_ message: [UInt8], key: [UInt8]) -> [UInt8]? {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let result = key.withUnsafeBytes { key in
            message.withUnsafeBytes { data in
                HMAC(EVP_sha256(), key.baseAddress, Int32(key.count), data.baseAddress?.assumingMemoryBound(to: UInt8.self),
                     data.count, &digest, &length)
            }
        }
        guard result != nil, length == UInt32(digestLength) else {
            ERR_clear_error()
            return nil
        }
        return Array(digest.prefix(digestLength))
    }
}

/// HKDF-SHA256 (RFC 5869), extract then expand, through OpenSSL's HKDF (`EVP_PKEY_HKDF`). The parameters go in as
/// `OSSL_PARAM`s, which is what OpenSSL 3's `EVP_PKEY_CTX_set_hkdf_md` and friends do (they live in kdf.h, which the
/// COpenSSL shim does not include). An empty salt means HashLen zero bytes, as in the RFC.
enum HKDFSHA256 {
    /// At most 255 × 32 bytes (RFC 5869 §2.3).
    static func derive(inputKeyingMaterial: [UInt8], salt: [UInt8], info: [UInt8], length: Int) -> [UInt8]? {
        guard length > 0, length <= 255 * 32, !inputKeyingMaterial.isEmpty else { return nil }
        guard let output = openSSLDerive(inputKeyingMaterial: inputKeyingMaterial, salt: salt, info: info, length: length) else {
            ERR_clear_error() // a stale entry would mislead the next SSL_get_error on this thread
            return nil
        }
        return output
    }

    private static func openSSLDerive(inputKeyingMaterial: [UInt8], salt: [UInt8], info: [UInt8], length: Int) -> [UInt8]? {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_derive_init(context) == 1 else { return nil }
        var digestName: [CChar] = Array("SHA256".utf8CString)
        var salt = salt, key = inputKeyingMaterial, info = info
        let parametersSet: Bool = digestName.withUnsafeMutableBufferPointer { digestName in
            salt.withUnsafeMutableBytes { salt in
                key.withUnsafeMutableBytes { key in
                    info.withUnsafeMutableBytes { info in
                        var parameters = [utf8Parameter("digest", digestName)]
                        parameters.append(octetParameter("key", key))
                        if !salt.isEmpty { parameters.append(octetParameter("salt", salt)) }
                        if !info.isEmpty { parameters.append(octetParameter("info", info)) }
                        parameters.append(OSSL_PARAM(key: nil, data_type: 0, data: nil, data_size: 0, return_size: 0))
                        return EVP_PKEY_CTX_set_params(context, &parameters) == 1
                    }
                }
            }
        }
        guard parametersSet else { return nil }
        var output = [UInt8](repeating: 0, count: length)
        var outputLength = length
        guard EVP_PKEY_derive(context, &output, &outputLength) == 1, outputLength == length else { return nil }
        return output
    }

    // The names are static strings, so their pointers outlive the call.
    private static func utf8Parameter(_ name: StaticString, _ value: UnsafeMutableBufferPointer<CChar>) -> OSSL_PARAM {
        OSSL_PARAM(key: UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self), data_type: UInt32(OSSL_PARAM_UTF8_STRING),
                   data: UnsafeMutableRawPointer(value.baseAddress), data_size: value.count - 1, return_size: 0)
    }

    private static func octetParameter(_ name: StaticString, _ value: UnsafeMutableRawBufferPointer) -> OSSL_PARAM {
        OSSL_PARAM(key: UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self), data_type: UInt32(OSSL_PARAM_OCTET_STRING),
                   data: value.baseAddress, data_size: value.count, return_size: 0)
    }
}

enum OpenSSLBytes {
    /// Equal length and equal bytes, in time that depends only on the length (`CRYPTO_memcmp`).
    static func constantTimeEqual(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        guard left.count == right.count else { return false }
        guard !left.isEmpty else { return true }
        return left.withUnsafeBytes { left in
            right.withUnsafeBytes { right in CRYPTO_memcmp(left.baseAddress, right.baseAddress, left.count) == 0 }
        }
    }

    /// `count` bytes from OpenSSL's CSPRNG, or nil if it failed.
    static func random(count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        guard count == 0 || RAND_bytes(&bytes, Int32(count)) == 1 else { return nil }
        return bytes
    }
}

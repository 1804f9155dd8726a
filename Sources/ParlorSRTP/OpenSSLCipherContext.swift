import COpenSSL

/// One OpenSSL `EVP_CIPHER_CTX` keyed once (AES-128-CTR, AES-128-ECB or AES-128-GCM), for one direction of one
/// session. Per packet only the IV is set (`EVP_CipherInit_ex` with no cipher and no key), so OpenSSL keeps the
/// expanded key and nothing is allocated. Not thread-safe: it belongs to the thread of its session.
///
/// Noncopyable, stored inline in its transform: one pointer hop less per packet than a class (with thousands of
/// sessions every hop is a likely cache miss).
struct OpenSSLCipherContext: ~Copyable {
    let context: OpaquePointer

    /// `cipher` is `EVP_aes_128_ctr()` and the like; `encrypt` picks the direction (only GCM cares).
    init(cipher: OpaquePointer?, key: [UInt8], encrypt: Bool) throws(SRTPError) {
        guard let cipher, let context = EVP_CIPHER_CTX_new() else { throw .openSSL(call: "EVP_CIPHER_CTX_new") }
        let status = key.withUnsafeBufferPointer { key in
            EVP_CipherInit_ex(context, cipher, nil, key.baseAddress, nil, encrypt ? 1 : 0)
        }
        guard status == 1 else {
            EVP_CIPHER_CTX_free(context)
            throw .openSSL(call: "EVP_CipherInit_ex")
        }
        self.context = context
    }

    deinit { EVP_CIPHER_CTX_free(context) }

    /// Starts a new message under the kept key: counter mode's counter block, or GCM's 12-byte IV.
    @inline(__always)
    func start(iv: UnsafePointer<UInt8>) throws(SRTPError) {
        guard EVP_CipherInit_ex(context, nil, nil, nil, iv, -1) == 1 else { throw .openSSL(call: "EVP_CipherInit_ex(iv)") }
    }

    /// `start(iv:)` with the IV in a value on the stack (GCM reads its first 12 bytes).
    @inline(__always)
    func start(iv: SIMD16<UInt8>) throws(SRTPError) {
        var iv = iv
        let status = withUnsafeBytes(of: &iv) { bytes in
            EVP_CipherInit_ex(context, nil, nil, nil, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), -1)
        }
        guard status == 1 else { throw .openSSL(call: "EVP_CipherInit_ex(iv)") }
    }

    /// Encrypts or decrypts `count` bytes in place (exact overlap is allowed for CTR and GCM).
    @inline(__always)
    func transform(_ bytes: UnsafeMutablePointer<UInt8>, count: Int) throws(SRTPError) {
        guard count > 0 else { return }
        var written: Int32 = 0
        guard EVP_CipherUpdate(context, bytes, &written, bytes, Int32(count)) == 1, written == Int32(count) else {
            throw .openSSL(call: "EVP_CipherUpdate")
        }
    }

    /// GCM's additional authenticated data, before `transform`.
    @inline(__always)
    func authenticateOnly(_ bytes: UnsafePointer<UInt8>, count: Int) throws(SRTPError) {
        guard count > 0 else { return }
        var written: Int32 = 0
        guard EVP_CipherUpdate(context, nil, &written, bytes, Int32(count)) == 1 else { throw .openSSL(call: "EVP_CipherUpdate(aad)") }
    }

    /// GCM's additional authenticated data: the big-endian bytes of `word` (SRTCP's E-flag and index), from the stack.
    @inline(__always)
    func authenticateOnly(bigEndian word: UInt32) throws(SRTPError) {
        var bytes = word.bigEndian
        var written: Int32 = 0
        let status = withUnsafeBytes(of: &bytes) { bytes in
            EVP_CipherUpdate(context, nil, &written, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), 4)
        }
        guard status == 1 else { throw .openSSL(call: "EVP_CipherUpdate(aad)") }
    }

    /// GCM, encrypting: finishes the message and writes the 16-byte tag.
    @inline(__always)
    func finishWritingTag(_ tag: UnsafeMutablePointer<UInt8>, length: Int) throws(SRTPError) {
        var written: Int32 = 0
        var unused: UInt8 = 0
        guard EVP_CipherFinal_ex(context, &unused, &written) == 1,
              EVP_CIPHER_CTX_ctrl(context, Int32(EVP_CTRL_AEAD_GET_TAG), Int32(length), tag) == 1 else {
            throw .openSSL(call: "EVP_CipherFinal_ex")
        }
    }

    /// GCM, decrypting: checks the received tag; false when it does not match.
    @inline(__always)
    func finishCheckingTag(_ tag: UnsafeMutablePointer<UInt8>, length: Int) -> Bool {
        var written: Int32 = 0
        var unused: UInt8 = 0
        guard EVP_CIPHER_CTX_ctrl(context, Int32(EVP_CTRL_AEAD_SET_TAG), Int32(length), tag) == 1 else { return false }
        return EVP_CipherFinal_ex(context, &unused, &written) == 1
    }
}

/// One OpenSSL HMAC-SHA1 `EVP_MAC_CTX` keyed once with a session's authentication key. Per packet it is
/// re-initialised with no key (`EVP_MAC_init(ctx, NULL, 0, NULL)`), which makes OpenSSL restart from the kept
/// key's inner state rather than hash the key again. Not thread-safe: it belongs to the thread of its session.
/// Noncopyable and stored inline, like `OpenSSLCipherContext`.
struct OpenSSLHMACSHA1Context: ~Copyable {
    static let digestLength = 20
    private let mac: OpaquePointer
    private let context: OpaquePointer

    init(key: [UInt8]) throws(SRTPError) {
        guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else { throw .openSSL(call: "EVP_MAC_fetch(HMAC)") }
        guard let context = EVP_MAC_CTX_new(mac) else {
            EVP_MAC_free(mac)
            throw .openSSL(call: "EVP_MAC_CTX_new")
        }
        // One OSSL_PARAM naming the digest, and the end marker (params.h's constructors are not in our shim).
        var digestName: [CChar] = Array("SHA1".utf8CString)
        let status = "digest".withCString { parameterName in
            digestName.withUnsafeMutableBufferPointer { name in
                var parameters = [
                    OSSL_PARAM(key: parameterName, data_type: UInt32(OSSL_PARAM_UTF8_STRING), data: UnsafeMutableRawPointer(name.baseAddress),
                               data_size: name.count - 1, return_size: 0),
                    OSSL_PARAM(key: nil, data_type: 0, data: nil, data_size: 0, return_size: 0),
                ]
                return key.withUnsafeBufferPointer { key in EVP_MAC_init(context, key.baseAddress, key.count, &parameters) }
            }
        }
        guard status == 1 else {
            EVP_MAC_CTX_free(context)
            EVP_MAC_free(mac)
            throw .openSSL(call: "EVP_MAC_init(HMAC-SHA1)")
        }
        self.mac = mac
        self.context = context
    }

    deinit {
        EVP_MAC_CTX_free(context)
        EVP_MAC_free(mac)
    }

    /// Starts a new MAC under the kept key.
    @inline(__always)
    func start() throws(SRTPError) {
        guard EVP_MAC_init(context, nil, 0, nil) == 1 else { throw .openSSL(call: "EVP_MAC_init") }
    }

    @inline(__always)
    func update(_ bytes: UnsafeRawPointer, count: Int) throws(SRTPError) {
        guard EVP_MAC_update(context, bytes.assumingMemoryBound(to: UInt8.self), count) == 1 else { throw .openSSL(call: "EVP_MAC_update") }
    }

    /// Writes the 20-byte digest to `digest`.
    @inline(__always)
    func finish(into digest: UnsafeMutablePointer<UInt8>) throws(SRTPError) {
        var written = 0
        guard EVP_MAC_final(context, digest, &written, Self.digestLength) == 1, written == Self.digestLength else {
            throw .openSSL(call: "EVP_MAC_final")
        }
    }

    /// The 20-byte digest in the first bytes of a value on the stack.
    @inline(__always)
    func finish() throws(SRTPError) -> SIMD32<UInt8> {
        var digest = SIMD32<UInt8>()
        var written = 0
        let status = withUnsafeMutableBytes(of: &digest) { bytes in
            EVP_MAC_final(context, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), &written, Self.digestLength)
        }
        guard status == 1, written == Self.digestLength else { throw .openSSL(call: "EVP_MAC_final") }
        return digest
    }

    /// The big-endian bytes of `word` (SRTP's ROC), from the stack.
    @inline(__always)
    func update(bigEndian word: UInt32) throws(SRTPError) {
        var bytes = word.bigEndian
        let status = withUnsafeBytes(of: &bytes) { bytes in
            EVP_MAC_update(context, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), 4)
        }
        guard status == 1 else { throw .openSSL(call: "EVP_MAC_update") }
    }
}

import COpenSSL

/// One OpenSSL `EVP_CIPHER_CTX` with AES-128-GCM keyed once, for one direction of one link. Per packet only the
/// 12-byte IV is set, so OpenSSL keeps the expanded key (ParlorSRTP's `OpenSSLCipherContext` does the same).
/// Noncopyable, stored inline in its sender or receiver; not thread-safe.
struct AES128GCMContext: ~Copyable {
    static let tagLength = 16
    static let ivLength = 12
    private let context: OpaquePointer

    init(key: [UInt8], encrypt: Bool) throws(MediaLinkCryptoError) {
        guard key.count == 16 else { throw .wrongKeyLength(expected: 16, got: key.count) }
        guard let context = EVP_CIPHER_CTX_new() else { throw failure("EVP_CIPHER_CTX_new") }
        guard EVP_CipherInit_ex(context, EVP_aes_128_gcm(), nil, key, nil, encrypt ? 1 : 0) == 1 else {
            EVP_CIPHER_CTX_free(context)
            throw failure("EVP_CipherInit_ex(AES-128-GCM)")
        }
        self.context = context
    }

    deinit { EVP_CIPHER_CTX_free(context) }

    /// Encrypts `bodyCount` bytes at `body` in place, authenticating the `aadCount` bytes at `aad` with them, and
    /// writes the 16-byte tag at `tag`.
    func seal(iv: [UInt8], aad: UnsafePointer<UInt8>, aadCount: Int, body: UnsafeMutablePointer<UInt8>, bodyCount: Int,
              tag: UnsafeMutablePointer<UInt8>) throws(MediaLinkCryptoError) {
        try start(iv: iv, aad: aad, aadCount: aadCount)
        try transform(body, count: bodyCount)
        var written: Int32 = 0
        var unused: UInt8 = 0
        guard EVP_CipherFinal_ex(context, &unused, &written) == 1,
              EVP_CIPHER_CTX_ctrl(context, Int32(EVP_CTRL_AEAD_GET_TAG), Int32(Self.tagLength), tag) == 1 else {
            throw failure("EVP_CipherFinal_ex(seal)")
        }
    }

    /// Decrypts in place and checks `tag`: false when it does not match (the bytes at `body` are then garbage and
    /// must be dropped).
    func open(iv: [UInt8], aad: UnsafePointer<UInt8>, aadCount: Int, body: UnsafeMutablePointer<UInt8>, bodyCount: Int,
              tag: UnsafeMutablePointer<UInt8>) throws(MediaLinkCryptoError) -> Bool {
        try start(iv: iv, aad: aad, aadCount: aadCount)
        try transform(body, count: bodyCount)
        var written: Int32 = 0
        var unused: UInt8 = 0
        guard EVP_CIPHER_CTX_ctrl(context, Int32(EVP_CTRL_AEAD_SET_TAG), Int32(Self.tagLength), tag) == 1 else {
            throw failure("EVP_CIPHER_CTX_ctrl(SET_TAG)")
        }
        guard EVP_CipherFinal_ex(context, &unused, &written) == 1 else {
            ERR_clear_error()
            return false
        }
        return true
    }

    private func start(iv: [UInt8], aad: UnsafePointer<UInt8>, aadCount: Int) throws(MediaLinkCryptoError) {
        guard iv.count == Self.ivLength, EVP_CipherInit_ex(context, nil, nil, nil, iv, -1) == 1 else { throw failure("EVP_CipherInit_ex(iv)") }
        var written: Int32 = 0
        guard aadCount == 0 || EVP_CipherUpdate(context, nil, &written, aad, Int32(aadCount)) == 1 else { throw failure("EVP_CipherUpdate(aad)") }
    }

    private func transform(_ bytes: UnsafeMutablePointer<UInt8>, count: Int) throws(MediaLinkCryptoError) {
        guard count > 0 else { return }
        var written: Int32 = 0
        guard EVP_CipherUpdate(context, bytes, &written, bytes, Int32(count)) == 1, written == Int32(count) else {
            throw failure("EVP_CipherUpdate")
        }
    }
}

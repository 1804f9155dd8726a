import COpenSSL

/// An ephemeral X25519 key pair (RFC 7748) held by OpenSSL (`EVP_PKEY_X25519`): made fresh for each link epoch, its
/// public key goes into the node's signed link offer, and the private key never leaves OpenSSL (which clears it when
/// the key is freed). Not Sendable: it belongs to the thread that sets the link up.
public final class X25519KeyPair {
    public static let keyLength = 32

    private let key: OpaquePointer
    /// The 32-byte public key (the u-coordinate, little-endian, as RFC 7748 §5 encodes it).
    public let publicKey: [UInt8]

    /// A new key pair from OpenSSL's CSPRNG.
    public convenience init() throws(MediaLinkCryptoError) {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_X25519, nil) else { throw failure("EVP_PKEY_CTX_new_id(X25519)") }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_keygen(context, &key) == 1, let key else { throw failure("EVP_PKEY_keygen") }
        try self.init(taking: key)
    }

    /// The key pair of a given 32-byte private key (a scalar; X25519 clamps it): for the RFC's test vectors.
    convenience init(privateKey: [UInt8]) throws(MediaLinkCryptoError) {
        guard privateKey.count == Self.keyLength else { throw .wrongKeyLength(expected: Self.keyLength, got: privateKey.count) }
        guard let key = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nil, privateKey, privateKey.count) else {
            throw failure("EVP_PKEY_new_raw_private_key")
        }
        try self.init(taking: key)
    }

    private init(taking key: OpaquePointer) throws(MediaLinkCryptoError) {
        var publicKey = [UInt8](repeating: 0, count: Self.keyLength)
        var length = Self.keyLength
        guard EVP_PKEY_get_raw_public_key(key, &publicKey, &length) == 1, length == Self.keyLength else {
            EVP_PKEY_free(key)
            throw failure("EVP_PKEY_get_raw_public_key")
        }
        self.key = key
        self.publicKey = publicKey
    }

    deinit { EVP_PKEY_free(key) }

    /// X25519(our private key, `peerPublicKey`): 32 bytes both ends compute alike. Refuses the all-zero result
    /// (RFC 7748 §6.1), which a low-order peer key gives whatever our key is.
    public func sharedSecret(withPeer peerPublicKey: [UInt8]) throws(MediaLinkCryptoError) -> [UInt8] {
        guard peerPublicKey.count == Self.keyLength else { throw .wrongKeyLength(expected: Self.keyLength, got: peerPublicKey.count) }
        guard let peer = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nil, peerPublicKey, peerPublicKey.count) else {
            throw failure("EVP_PKEY_new_raw_public_key")
        }
        defer { EVP_PKEY_free(peer) }
        guard let context = EVP_PKEY_CTX_new(key, nil) else { throw failure("EVP_PKEY_CTX_new") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_derive_init(context) == 1 else { throw failure("EVP_PKEY_derive_init") }
        guard EVP_PKEY_derive_set_peer(context, peer) == 1 else { throw failure("EVP_PKEY_derive_set_peer") }
        var secret = [UInt8](repeating: 0, count: Self.keyLength)
        var length = Self.keyLength
        // With both keys valid 32-byte X25519 keys, OpenSSL's derive fails only on the all-zero result.
        guard EVP_PKEY_derive(context, &secret, &length) == 1 else {
            ERR_clear_error()
            throw .allZeroSharedSecret
        }
        guard length == Self.keyLength else { throw failure("EVP_PKEY_derive(length)") }
        guard !OpenSSLBytes.constantTimeEqual(secret, [UInt8](repeating: 0, count: Self.keyLength)) else { throw .allZeroSharedSecret }
        return secret
    }
}

/// An OpenSSL failure as an error, with OpenSSL's error queue emptied: a stale entry there would mislead the next
/// `SSL_get_error` on the same thread.
func failure(_ call: String) -> MediaLinkCryptoError {
    ERR_clear_error()
    return .openSSL(call: call)
}

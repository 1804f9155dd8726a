import COpenSSL

/// The session keys of one direction, derived from its master key and salt (RFC 3711 §4.3, the AES-CM PRF,
/// key derivation rate 0). AEAD_AES_128_GCM uses the same KDF with a 96-bit master salt (RFC 7714 §11).
struct SRTPSessionKeys: Equatable {
    var rtpEncryptionKey: [UInt8]
    /// HMAC-SHA1 key, 20 bytes for counter mode; empty for GCM, whose tag needs no key of its own.
    var rtpAuthenticationKey: [UInt8]
    var rtpSalt: [UInt8]
    var rtcpEncryptionKey: [UInt8]
    var rtcpAuthenticationKey: [UInt8]
    var rtcpSalt: [UInt8]
}

/// RFC 3711 §4.3.1: the key derivation labels.
enum SRTPKeyLabel: UInt8 {
    case rtpEncryption = 0x00, rtpAuthentication = 0x01, rtpSalt = 0x02
    case rtcpEncryption = 0x03, rtcpAuthentication = 0x04, rtcpSalt = 0x05
}

enum SRTPKeyDerivation {
    /// HMAC-SHA1's session key length for AES_CM_128_HMAC_SHA1_80 (RFC 3711 §8.2: n_a = 160).
    static let authenticationKeyLength = 20

    /// The six session keys of `profile` from `keyingMaterial` (master key then master salt).
    static func sessionKeys(profile: SRTPProtectionProfile, keyingMaterial: [UInt8]) throws(SRTPError) -> SRTPSessionKeys {
        guard keyingMaterial.count == profile.keyingMaterialLength else {
            throw .wrongKeyingMaterialLength(expected: profile.keyingMaterialLength, got: keyingMaterial.count)
        }
        let masterKey = Array(keyingMaterial[0..<profile.masterKeyLength])
        let masterSalt = Array(keyingMaterial[profile.masterKeyLength...])
        let authenticationLength = profile == .aes128CMHMACSHA1_80 ? authenticationKeyLength : 0
        func derive(_ label: SRTPKeyLabel, _ length: Int) throws(SRTPError) -> [UInt8] {
            try pseudoRandom(masterKey: masterKey, masterSalt: masterSalt, label: label, length: length)
        }
        return SRTPSessionKeys(
            rtpEncryptionKey: try derive(.rtpEncryption, profile.masterKeyLength),
            rtpAuthenticationKey: try derive(.rtpAuthentication, authenticationLength),
            rtpSalt: try derive(.rtpSalt, profile.sessionSaltLength),
            rtcpEncryptionKey: try derive(.rtcpEncryption, profile.masterKeyLength),
            rtcpAuthenticationKey: try derive(.rtcpAuthentication, authenticationLength),
            rtcpSalt: try derive(.rtcpSalt, profile.sessionSaltLength))
    }

    /// PRF_n(k_master, x) of RFC 3711 §4.3.3: the AES-CM keystream under the master key, from the counter block
    /// x·2^16, where x = (label·2^48) XOR master salt (the salt as a 112-bit number; a 96-bit GCM salt is its
    /// upper 12 bytes with two zero bytes below, as libsrtp does). With kdr 0, "index DIV kdr" is 0.
    static func pseudoRandom(masterKey: [UInt8], masterSalt: [UInt8], label: SRTPKeyLabel, length: Int) throws(SRTPError) -> [UInt8] {
        guard length > 0 else { return [] }
        var counterBlock = [UInt8](repeating: 0, count: 16)
        for (offset, byte) in masterSalt.prefix(14).enumerated() { counterBlock[offset] = byte }
        counterBlock[7] ^= label.rawValue
        let cipher = try OpenSSLCipherContext(cipher: EVP_aes_128_ctr(), key: masterKey, encrypt: true)
        var output = [UInt8](repeating: 0, count: length)
        // Result carries the typed error out of the standard library's closures.
        let started = counterBlock.withUnsafeBufferPointer { iv in Result { () throws(SRTPError) in try cipher.start(iv: iv.baseAddress!) } }
        try started.get()
        let transformed = output.withUnsafeMutableBufferPointer { bytes in
            Result { () throws(SRTPError) in try cipher.transform(bytes.baseAddress!, count: length) }
        }
        try transformed.get()
        return output
    }
}

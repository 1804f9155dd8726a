import COpenSSL

/// The floor under ParlorSRTP: the same OpenSSL calls a packet takes (set the IV, encrypt 188 bytes; GCM: the
/// 12-byte header as AAD and the tag; AES_CM: HMAC-SHA1 re-initialised from its key over 200 bytes and a ROC), on
/// contexts kept per session, round-robin in the same way, with none of our bookkeeping around them. What the
/// transform adds is the difference.
enum OpenSSLFloor {
    /// One session's contexts: a cipher context, and for counter mode an HMAC context.
    struct Contexts {
        var cipher: OpaquePointer
        var mac: OpaquePointer?
    }

    static func makeContexts(profile: SRTPProbeProfile, count: Int) -> [Contexts] {
        let hmac = EVP_MAC_fetch(nil, "HMAC", nil)
        return (0..<count).map { _ in
            let key = randomBytes(16)
            let cipher = EVP_CIPHER_CTX_new()!
            _ = EVP_CipherInit_ex(cipher, profile == .gcm ? EVP_aes_128_gcm() : EVP_aes_128_ctr(), nil, key, nil, 1)
            guard profile == .counterMode else { return Contexts(cipher: cipher, mac: nil) }
            let mac = EVP_MAC_CTX_new(hmac)!
            var digestName: [CChar] = Array("SHA1".utf8CString)
            "digest".withCString { parameterName in
                digestName.withUnsafeMutableBufferPointer { name in
                    var parameters = [
                        OSSL_PARAM(key: parameterName, data_type: UInt32(OSSL_PARAM_UTF8_STRING), data: UnsafeMutableRawPointer(name.baseAddress),
                                   data_size: name.count - 1, return_size: 0),
                        OSSL_PARAM(key: nil, data_type: 0, data: nil, data_size: 0, return_size: 0),
                    ]
                    _ = EVP_MAC_init(mac, randomBytes(20), 20, &parameters)
                }
            }
            return Contexts(cipher: cipher, mac: mac)
        }
    }

    /// Thread CPU and wall nanoseconds per packet over `rounds` packets round-robin over `sessionCount` sessions.
    static func measure(profile: SRTPProbeProfile, sessionCount: Int, rounds: Int) -> Cost {
        let sessions = makeContexts(profile: profile, count: sessionCount)
        let packet = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
        let iv = UnsafeMutablePointer<UInt8>.allocate(capacity: 16)
        let digest = UnsafeMutablePointer<UInt8>.allocate(capacity: 32)
        packet.initialize(repeating: 0x5A, count: 256)
        iv.initialize(repeating: 0, count: 16)
        var written: Int32 = 0
        var digestLength = 0
        func run(_ round: Int) {
            let contexts = sessions[round % sessionCount]
            iv[11] = UInt8(truncatingIfNeeded: round)
            _ = EVP_CipherInit_ex(contexts.cipher, nil, nil, nil, iv, -1)
            if profile == .gcm {
                _ = EVP_CipherUpdate(contexts.cipher, nil, &written, packet, 12)
                _ = EVP_CipherUpdate(contexts.cipher, packet + 12, &written, packet + 12, 188)
                _ = EVP_CipherFinal_ex(contexts.cipher, digest, &written)
                _ = EVP_CIPHER_CTX_ctrl(contexts.cipher, Int32(EVP_CTRL_AEAD_GET_TAG), 16, packet + 200)
            } else {
                _ = EVP_CipherUpdate(contexts.cipher, packet + 12, &written, packet + 12, 188)
                _ = EVP_MAC_init(contexts.mac, nil, 0, nil)
                _ = EVP_MAC_update(contexts.mac, packet, 200)
                _ = EVP_MAC_update(contexts.mac, iv, 4)
                _ = EVP_MAC_final(contexts.mac, digest, &digestLength, 20)
            }
        }
        for round in 0..<sessionCount { run(round) }
        let start = Clocks.now()
        for round in 0..<rounds { run(round) }
        let cost = Clocks.now().perPacket(since: start, packets: rounds)
        for contexts in sessions {
            EVP_CIPHER_CTX_free(contexts.cipher)
            EVP_MAC_CTX_free(contexts.mac)
        }
        packet.deallocate()
        iv.deallocate()
        digest.deallocate()
        return cost
    }
}

enum SRTPProbeProfile {
    case counterMode, gcm
}

import COpenSSL

/// AES_CM_128_HMAC_SHA1_80 (RFC 3711) for one direction of one session: AES-128 in counter mode (OpenSSL's
/// AES-128-CTR) encrypts, HMAC-SHA1 (OpenSSL's) authenticates, truncated to 80 bits. What is ours is the packet
/// layout: the counter block, which bytes are encrypted and authenticated, where the tag and SRTCP index go.
struct CounterModeTransform: ~Copyable {
    static let tagLength = 10
    private let rtpCipher: OpenSSLCipherContext
    private let rtcpCipher: OpenSSLCipherContext
    private let rtpMAC: OpenSSLHMACSHA1Context
    private let rtcpMAC: OpenSSLHMACSHA1Context
    private let scratch: TransformScratch

    init(keys: SRTPSessionKeys) throws(SRTPError) {
        // Every context made before any is stored: a noncopyable value is initialised all at once or not at all.
        let rtpCipher = try OpenSSLCipherContext(cipher: EVP_aes_128_ctr(), key: keys.rtpEncryptionKey, encrypt: true)
        let rtcpCipher = try OpenSSLCipherContext(cipher: EVP_aes_128_ctr(), key: keys.rtcpEncryptionKey, encrypt: true)
        let rtpMAC = try OpenSSLHMACSHA1Context(key: keys.rtpAuthenticationKey)
        let rtcpMAC = try OpenSSLHMACSHA1Context(key: keys.rtcpAuthenticationKey)
        self.rtpCipher = rtpCipher
        self.rtcpCipher = rtcpCipher
        self.rtpMAC = rtpMAC
        self.rtcpMAC = rtcpMAC
        scratch = TransformScratch(rtpSalt: keys.rtpSalt, rtcpSalt: keys.rtcpSalt)
    }

    deinit { scratch.release() }

    /// RFC 3711 §4.1.1: IV = (k_s · 2^16) XOR (SSRC · 2^64) XOR (i · 2^16), i the 48-bit (SRTCP: 31-bit) index.
    @inline(__always)
    private func startCounter(_ cipher: borrowing OpenSSLCipherContext, salt: UnsafeMutablePointer<UInt8>, ssrc: UInt32, index: UInt64) throws(SRTPError) {
        scratch.resetIV(from: salt, length: 14)
        scratch.xorIntoIV(UInt64(ssrc), count: 4, endingAt: 8)
        scratch.xorIntoIV(index, count: 6, endingAt: 14)
        try cipher.start(iv: scratch.iv)
    }

    /// HMAC-SHA1 over `count` bytes, then `trailer` big-endian (the ROC for SRTP, nothing for SRTCP), into `scratch.digest`.
    @inline(__always)
    private func authenticate(_ mac: borrowing OpenSSLHMACSHA1Context, _ bytes: UnsafePointer<UInt8>, count: Int, rolloverCounter: UInt32?) throws(SRTPError) {
        try mac.start()
        try mac.update(bytes, count: count)
        if let rolloverCounter {
            RTPPacketLayout.writeUInt32(rolloverCounter, to: scratch.word, at: 0)
            try mac.update(scratch.word, count: 4)
        }
        try mac.finish(into: scratch.digest)
    }

    /// Encrypts the payload and appends the tag; `packet` has room for it. Returns the protected length.
    func protectRTP(_ packet: UnsafeMutablePointer<UInt8>, length: Int, headerLength: Int, ssrc: UInt32, index: UInt64) throws(SRTPError) -> Int {
        try startCounter(rtpCipher, salt: scratch.rtpSalt, ssrc: ssrc, index: index)
        try rtpCipher.transform(packet + headerLength, count: length - headerLength)
        try authenticate(rtpMAC, packet, count: length, rolloverCounter: UInt32(truncatingIfNeeded: index >> 16))
        (packet + length).update(from: scratch.digest, count: Self.tagLength)
        return length + Self.tagLength
    }

    /// Checks the tag under `index`'s ROC, then decrypts the payload. Returns the length without the tag.
    func unprotectRTP(_ packet: UnsafeMutablePointer<UInt8>, length: Int, headerLength: Int, ssrc: UInt32, index: UInt64) throws(SRTPError) -> Int {
        let authenticatedLength = length - Self.tagLength
        try authenticate(rtpMAC, packet, count: authenticatedLength, rolloverCounter: UInt32(truncatingIfNeeded: index >> 16))
        guard CRYPTO_memcmp(scratch.digest, packet + authenticatedLength, Self.tagLength) == 0 else { throw .authenticationFailed }
        try startCounter(rtpCipher, salt: scratch.rtpSalt, ssrc: ssrc, index: index)
        try rtpCipher.transform(packet + headerLength, count: authenticatedLength - headerLength)
        return authenticatedLength
    }

    /// RFC 3711 §3.4: encrypts after the first 8 bytes, appends E=1 with the 31-bit index, then the tag over all of it.
    func protectRTCP(_ packet: UnsafeMutablePointer<UInt8>, length: Int, ssrc: UInt32, index: UInt32) throws(SRTPError) -> Int {
        let clear = RTPPacketLayout.rtcpClearLength
        try startCounter(rtcpCipher, salt: scratch.rtcpSalt, ssrc: ssrc, index: UInt64(index))
        try rtcpCipher.transform(packet + clear, count: length - clear)
        RTPPacketLayout.writeUInt32(0x8000_0000 | index, to: packet, at: length)
        try authenticate(rtcpMAC, packet, count: length + 4, rolloverCounter: nil)
        (packet + length + 4).update(from: scratch.digest, count: Self.tagLength)
        return length + 4 + Self.tagLength
    }

    /// Checks the tag (it covers the E-flag and index), then decrypts when E is set. `length` includes the index
    /// and tag; returns the RTCP packet's length.
    func unprotectRTCP(_ packet: UnsafeMutablePointer<UInt8>, length: Int, ssrc: UInt32, index: UInt32, encrypted: Bool) throws(SRTPError) -> Int {
        let authenticatedLength = length - Self.tagLength
        try authenticate(rtcpMAC, packet, count: authenticatedLength, rolloverCounter: nil)
        guard CRYPTO_memcmp(scratch.digest, packet + authenticatedLength, Self.tagLength) == 0 else { throw .authenticationFailed }
        let rtcpLength = authenticatedLength - 4
        if encrypted {
            let clear = RTPPacketLayout.rtcpClearLength
            try startCounter(rtcpCipher, salt: scratch.rtcpSalt, ssrc: ssrc, index: UInt64(index))
            try rtcpCipher.transform(packet + clear, count: rtcpLength - clear)
        }
        return rtcpLength
    }
}

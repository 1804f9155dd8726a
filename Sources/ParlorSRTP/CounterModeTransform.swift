import COpenSSL

/// AES_CM_128_HMAC_SHA1_80 (RFC 3711) for one direction of one session: AES-128 in counter mode (OpenSSL's
/// AES-128-CTR) encrypts, HMAC-SHA1 (OpenSSL's) authenticates, truncated to 80 bits. What is ours is the packet
/// layout: the counter block, which bytes are encrypted and authenticated, where the tag and SRTCP index go.
/// Noncopyable, stored inline in its sender or receiver.
struct CounterModeTransform: ~Copyable {
    static let tagLength = 10
    private let rtpCipher: OpenSSLCipherContext
    private let rtcpCipher: OpenSSLCipherContext
    private let rtpMAC: OpenSSLHMACSHA1Context
    private let rtcpMAC: OpenSSLHMACSHA1Context
    private let rtpSalt: SessionSalt
    private let rtcpSalt: SessionSalt

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
        rtpSalt = SessionSalt(keys.rtpSalt)
        rtcpSalt = SessionSalt(keys.rtcpSalt)
    }

    /// RFC 3711 §4.1.1: IV = (k_s · 2^16) XOR (SSRC · 2^64) XOR (i · 2^16), i the 48-bit (SRTCP: 31-bit) index:
    /// the SSRC in bytes 4–7, the index in bytes 8–13.
    @inline(__always)
    private func counterBlock(_ salt: SessionSalt, ssrc: UInt32, index: UInt64) -> SIMD16<UInt8> {
        salt.iv(UInt64(ssrc), count: 4, endingAt: 8, index, count: 6, endingAt: 14)
    }

    /// HMAC-SHA1 over `count` bytes, then the ROC big-endian for SRTP (nothing for SRTCP).
    @inline(__always)
    private func authenticate(_ mac: borrowing OpenSSLHMACSHA1Context, _ bytes: UnsafePointer<UInt8>, count: Int,
                              rolloverCounter: UInt32?) throws(SRTPError) -> SIMD32<UInt8> {
        try mac.start()
        try mac.update(bytes, count: count)
        if let rolloverCounter { try mac.update(bigEndian: rolloverCounter) }
        return try mac.finish()
    }

    /// Writes the first `tagLength` bytes of `digest` at `destination`.
    @inline(__always)
    private func writeTag(_ digest: SIMD32<UInt8>, to destination: UnsafeMutablePointer<UInt8>) {
        for offset in 0..<Self.tagLength { destination[offset] = digest[offset] }
    }

    /// Compares the tag at `received` with the digest's first bytes in constant time.
    @inline(__always)
    private func tagMatches(_ digest: SIMD32<UInt8>, _ received: UnsafePointer<UInt8>) -> Bool {
        var digest = digest
        return withUnsafeBytes(of: &digest) { CRYPTO_memcmp($0.baseAddress!, received, Self.tagLength) == 0 }
    }

    /// Encrypts the payload and appends the tag; `packet` has room for it. Returns the protected length.
    func protectRTP(_ packet: UnsafeMutablePointer<UInt8>, length: Int, headerLength: Int, ssrc: UInt32, index: UInt64) throws(SRTPError) -> Int {
        try rtpCipher.start(iv: counterBlock(rtpSalt, ssrc: ssrc, index: index))
        try rtpCipher.transform(packet + headerLength, count: length - headerLength)
        let digest = try authenticate(rtpMAC, packet, count: length, rolloverCounter: UInt32(truncatingIfNeeded: index >> 16))
        writeTag(digest, to: packet + length)
        return length + Self.tagLength
    }

    /// Checks the tag under `index`'s ROC, then decrypts the payload. Returns the length without the tag.
    func unprotectRTP(_ packet: UnsafeMutablePointer<UInt8>, length: Int, headerLength: Int, ssrc: UInt32, index: UInt64) throws(SRTPError) -> Int {
        let authenticatedLength = length - Self.tagLength
        let digest = try authenticate(rtpMAC, packet, count: authenticatedLength, rolloverCounter: UInt32(truncatingIfNeeded: index >> 16))
        guard tagMatches(digest, packet + authenticatedLength) else { throw .authenticationFailed }
        try rtpCipher.start(iv: counterBlock(rtpSalt, ssrc: ssrc, index: index))
        try rtpCipher.transform(packet + headerLength, count: authenticatedLength - headerLength)
        return authenticatedLength
    }

    /// RFC 3711 §3.4: encrypts after the first 8 bytes, appends E=1 with the 31-bit index, then the tag over all of it.
    func protectRTCP(_ packet: UnsafeMutablePointer<UInt8>, length: Int, ssrc: UInt32, index: UInt32) throws(SRTPError) -> Int {
        let clear = RTPPacketLayout.rtcpClearLength
        try rtcpCipher.start(iv: counterBlock(rtcpSalt, ssrc: ssrc, index: UInt64(index)))
        try rtcpCipher.transform(packet + clear, count: length - clear)
        RTPPacketLayout.writeUInt32(0x8000_0000 | index, to: packet, at: length)
        let digest = try authenticate(rtcpMAC, packet, count: length + 4, rolloverCounter: nil)
        writeTag(digest, to: packet + length + 4)
        return length + 4 + Self.tagLength
    }

    /// Checks the tag (it covers the E-flag and index), then decrypts when E is set. `length` includes the index
    /// and tag; returns the RTCP packet's length.
    func unprotectRTCP(_ packet: UnsafeMutablePointer<UInt8>, length: Int, ssrc: UInt32, index: UInt32, encrypted: Bool) throws(SRTPError) -> Int {
        let authenticatedLength = length - Self.tagLength
        let digest = try authenticate(rtcpMAC, packet, count: authenticatedLength, rolloverCounter: nil)
        guard tagMatches(digest, packet + authenticatedLength) else { throw .authenticationFailed }
        let rtcpLength = authenticatedLength - 4
        if encrypted {
            let clear = RTPPacketLayout.rtcpClearLength
            try rtcpCipher.start(iv: counterBlock(rtcpSalt, ssrc: ssrc, index: UInt64(index)))
            try rtcpCipher.transform(packet + clear, count: rtcpLength - clear)
        }
        return rtcpLength
    }
}

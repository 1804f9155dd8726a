import COpenSSL

/// AEAD_AES_128_GCM (RFC 7714) for one direction of one session: OpenSSL's AES-128-GCM encrypts and authenticates
/// in one pass with a 16-byte tag. What is ours is the IV (§8.1, §9.1) and the associated data: the RTP header
/// (§8.2), or the RTCP header with the E-flag and SRTCP index (§9.2; all of the packet when E is clear).
/// Noncopyable, stored inline in its sender or receiver.
struct GCMTransform: ~Copyable {
    static let tagLength = 16
    private let rtpCipher: OpenSSLCipherContext
    private let rtcpCipher: OpenSSLCipherContext
    private let rtpSalt: SessionSalt
    private let rtcpSalt: SessionSalt

    init(keys: SRTPSessionKeys, encrypt: Bool) throws(SRTPError) {
        // Both contexts made before either is stored: a noncopyable value is initialised all at once or not at all.
        let rtpCipher = try OpenSSLCipherContext(cipher: EVP_aes_128_gcm(), key: keys.rtpEncryptionKey, encrypt: encrypt)
        let rtcpCipher = try OpenSSLCipherContext(cipher: EVP_aes_128_gcm(), key: keys.rtcpEncryptionKey, encrypt: encrypt)
        self.rtpCipher = rtpCipher
        self.rtcpCipher = rtcpCipher
        rtpSalt = SessionSalt(keys.rtpSalt)
        rtcpSalt = SessionSalt(keys.rtcpSalt)
    }

    /// §8.1: IV = (00 00 || SSRC || ROC || SEQ) XOR salt, i.e. the SSRC in bytes 2–5 and the 48-bit index in 6–11.
    @inline(__always)
    private func startRTP(ssrc: UInt32, index: UInt64) throws(SRTPError) {
        try rtpCipher.start(iv: rtpSalt.iv(UInt64(ssrc), count: 4, endingAt: 6, index, count: 6, endingAt: 12))
    }

    /// §9.1: IV = (00 00 || SSRC || 00 00 || 0 || SRTCP index) XOR salt: the 31-bit index in bytes 8–11, without E.
    @inline(__always)
    private func startRTCP(ssrc: UInt32, index: UInt32) throws(SRTPError) {
        try rtcpCipher.start(iv: rtcpSalt.iv(UInt64(ssrc), count: 4, endingAt: 6, UInt64(index), count: 4, endingAt: 12))
    }

    func protectRTP(_ packet: UnsafeMutablePointer<UInt8>, length: Int, headerLength: Int, ssrc: UInt32, index: UInt64) throws(SRTPError) -> Int {
        try startRTP(ssrc: ssrc, index: index)
        try rtpCipher.authenticateOnly(packet, count: headerLength)
        try rtpCipher.transform(packet + headerLength, count: length - headerLength)
        try rtpCipher.finishWritingTag(packet + length, length: Self.tagLength)
        return length + Self.tagLength
    }

    /// Decrypts in place and checks the tag; on a refusal the payload bytes are left decrypted with the wrong
    /// check, so the caller must drop the packet (it gets an error, never the bytes).
    func unprotectRTP(_ packet: UnsafeMutablePointer<UInt8>, length: Int, headerLength: Int, ssrc: UInt32, index: UInt64) throws(SRTPError) -> Int {
        let cipherEnd = length - Self.tagLength
        try startRTP(ssrc: ssrc, index: index)
        try rtpCipher.authenticateOnly(packet, count: headerLength)
        try rtpCipher.transform(packet + headerLength, count: cipherEnd - headerLength)
        guard rtpCipher.finishCheckingTag(packet + cipherEnd, length: Self.tagLength) else { throw .authenticationFailed }
        return cipherEnd
    }

    /// §9: header (8 bytes) || ciphertext || tag || E=1 with the 31-bit index; the AAD is the header then E||index.
    func protectRTCP(_ packet: UnsafeMutablePointer<UInt8>, length: Int, ssrc: UInt32, index: UInt32) throws(SRTPError) -> Int {
        let clear = RTPPacketLayout.rtcpClearLength
        let flagAndIndex = 0x8000_0000 | index
        try startRTCP(ssrc: ssrc, index: index)
        try rtcpCipher.authenticateOnly(packet, count: clear)
        try rtcpCipher.authenticateOnly(bigEndian: flagAndIndex)
        try rtcpCipher.transform(packet + clear, count: length - clear)
        try rtcpCipher.finishWritingTag(packet + length, length: Self.tagLength)
        RTPPacketLayout.writeUInt32(flagAndIndex, to: packet, at: length + Self.tagLength)
        return length + Self.tagLength + 4
    }

    /// `length` includes the tag and E||index. With E clear the whole RTCP packet is associated data (§9.2).
    func unprotectRTCP(_ packet: UnsafeMutablePointer<UInt8>, length: Int, ssrc: UInt32, index: UInt32, encrypted: Bool) throws(SRTPError) -> Int {
        let rtcpLength = length - Self.tagLength - 4
        let clear = encrypted ? RTPPacketLayout.rtcpClearLength : rtcpLength
        try startRTCP(ssrc: ssrc, index: index)
        try rtcpCipher.authenticateOnly(packet, count: clear)
        try rtcpCipher.authenticateOnly(packet + length - 4, count: 4)
        try rtcpCipher.transform(packet + clear, count: rtcpLength - clear)
        guard rtcpCipher.finishCheckingTag(packet + rtcpLength, length: Self.tagLength) else { throw .authenticationFailed }
        return rtcpLength
    }
}

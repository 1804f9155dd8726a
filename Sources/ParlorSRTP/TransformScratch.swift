/// Fixed bytes a packet transform works in, allocated once per context so that no packet allocates: the two
/// session salts, the IV being built, a MAC digest and 4 bytes for a big-endian word the MAC covers.
struct TransformScratch {
    private let base: UnsafeMutablePointer<UInt8>
    let rtpSalt: UnsafeMutablePointer<UInt8>
    let rtcpSalt: UnsafeMutablePointer<UInt8>
    let iv: UnsafeMutablePointer<UInt8>
    let digest: UnsafeMutablePointer<UInt8>
    let word: UnsafeMutablePointer<UInt8>

    init(rtpSalt salt: [UInt8], rtcpSalt otherSalt: [UInt8]) {
        base = .allocate(capacity: 96)
        base.initialize(repeating: 0, count: 96)
        rtpSalt = base
        rtcpSalt = base + 16
        iv = base + 32
        digest = base + 48
        word = base + 72
        for (offset, byte) in salt.prefix(16).enumerated() { rtpSalt[offset] = byte }
        for (offset, byte) in otherSalt.prefix(16).enumerated() { rtcpSalt[offset] = byte }
    }

    /// Zeroes the salts (they are key material) and frees the bytes; the owning transform calls it from deinit.
    func release() {
        base.update(repeating: 0, count: 96)
        base.deallocate()
    }

    /// `iv` = `salt` XOR (`value` big-endian, `count` bytes, ending at byte `end` of the IV). Call after `resetIV`.
    @inline(__always)
    func xorIntoIV(_ value: UInt64, count: Int, endingAt end: Int) {
        var remaining = value
        var offset = end - 1
        for _ in 0..<count {
            iv[offset] ^= UInt8(truncatingIfNeeded: remaining)
            remaining >>= 8
            offset -= 1
        }
    }

    /// `iv` = the first `length` bytes of `salt`, zero after them up to 16.
    @inline(__always)
    func resetIV(from salt: UnsafeMutablePointer<UInt8>, length: Int) {
        iv.update(from: salt, count: 16)
        if length < 16 { (iv + length).update(repeating: 0, count: 16 - length) }
    }
}

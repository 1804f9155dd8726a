/// A session salt and the IVs made from it, as 16-byte values: kept inline in the transform and built on the stack,
/// so a packet touches no allocation of its own for them (with thousands of sessions, each is a likely cache miss).
struct SessionSalt {
    let bytes: SIMD16<UInt8>

    /// The first bytes of `salt` (14 for counter mode, 12 for GCM), zero after them.
    init(_ salt: [UInt8]) {
        var bytes = SIMD16<UInt8>()
        for (offset, byte) in salt.prefix(16).enumerated() { bytes[offset] = byte }
        self.bytes = bytes
    }

    /// The salt XOR `value` big-endian in `count` bytes ending at byte `end`, XOR `other` likewise.
    @inline(__always)
    func iv(_ value: UInt64, count: Int, endingAt end: Int, _ other: UInt64, count otherCount: Int, endingAt otherEnd: Int) -> SIMD16<UInt8> {
        var iv = bytes
        var remaining = value
        for offset in stride(from: end - 1, through: end - count, by: -1) {
            iv[offset] ^= UInt8(truncatingIfNeeded: remaining)
            remaining >>= 8
        }
        remaining = other
        for offset in stride(from: otherEnd - 1, through: otherEnd - otherCount, by: -1) {
            iv[offset] ^= UInt8(truncatingIfNeeded: remaining)
            remaining >>= 8
        }
        return iv
    }
}

/// Network-order reads and writes on byte arrays, for the wire formats of this module (STUN, RTP, RTCP).
extension [UInt8] {
    @inline(__always)
    func uint16(at offset: Int) -> UInt16 { UInt16(self[offset]) << 8 | UInt16(self[offset + 1]) }

    @inline(__always)
    func uint32(at offset: Int) -> UInt32 {
        UInt32(self[offset]) << 24 | UInt32(self[offset + 1]) << 16 | UInt32(self[offset + 2]) << 8 | UInt32(self[offset + 3])
    }

    @inline(__always)
    func uint64(at offset: Int) -> UInt64 { UInt64(uint32(at: offset)) << 32 | UInt64(uint32(at: offset + 4)) }

    @inline(__always)
    mutating func appendUInt16(_ value: UInt16) {
        append(UInt8(value >> 8))
        append(UInt8(truncatingIfNeeded: value))
    }

    @inline(__always)
    mutating func appendUInt32(_ value: UInt32) {
        appendUInt16(UInt16(value >> 16))
        appendUInt16(UInt16(truncatingIfNeeded: value))
    }

    @inline(__always)
    mutating func appendUInt64(_ value: UInt64) {
        appendUInt32(UInt32(value >> 32))
        appendUInt32(UInt32(truncatingIfNeeded: value))
    }

    @inline(__always)
    mutating func setUInt16(_ value: UInt16, at offset: Int) {
        self[offset] = UInt8(value >> 8)
        self[offset + 1] = UInt8(truncatingIfNeeded: value)
    }

    @inline(__always)
    mutating func setUInt32(_ value: UInt32, at offset: Int) {
        setUInt16(UInt16(value >> 16), at: offset)
        setUInt16(UInt16(truncatingIfNeeded: value), at: offset + 2)
    }
}

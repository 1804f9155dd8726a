/// Where the parts of an RTP or RTCP packet lie, read from a caller's bytes without copying them.
enum RTPPacketLayout {
    /// The packet in `buffer[0..<length]`, as bytes; throws when `length` is not within the buffer.
    @inline(__always)
    static func bytes(of buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> UnsafeMutablePointer<UInt8> {
        guard let base = buffer.baseAddress, length >= 0, length <= buffer.count else { throw .tooShort(length: length) }
        return base.assumingMemoryBound(to: UInt8.self)
    }

    /// The RTP header's length: fixed 12 bytes, the CSRCs, and the header extension (RFC 3550 §5.1, §5.3.1), all
    /// of which SRTP authenticates but does not encrypt. Throws when `length` bytes cannot hold it.
    @inline(__always)
    static func rtpHeaderLength(_ packet: UnsafePointer<UInt8>, length: Int) throws(SRTPError) -> Int {
        guard length >= 12 else { throw .tooShort(length: length) }
        let first = packet[0]
        guard first >> 6 == 2 else { throw .badVersion(first >> 6) }
        var headerLength = 12 + 4 * Int(first & 0x0F)
        if first & 0x10 != 0 {
            guard length >= headerLength + 4 else { throw .tooShort(length: length) }
            let words = Int(packet[headerLength + 2]) << 8 | Int(packet[headerLength + 3])
            headerLength += 4 + 4 * words
        }
        guard length >= headerLength else { throw .tooShort(length: length) }
        return headerLength
    }

    /// RTCP's first 8 bytes (header and sender SSRC) stay clear (RFC 3711 §3.4).
    static let rtcpClearLength = 8

    @inline(__always)
    static func checkRTCPHeader(_ packet: UnsafePointer<UInt8>, length: Int) throws(SRTPError) {
        guard length >= rtcpClearLength else { throw .tooShort(length: length) }
        guard packet[0] >> 6 == 2 else { throw .badVersion(packet[0] >> 6) }
    }

    @inline(__always)
    static func readUInt16(_ bytes: UnsafePointer<UInt8>, at offset: Int) -> UInt16 {
        UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    @inline(__always)
    static func readUInt32(_ bytes: UnsafePointer<UInt8>, at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    @inline(__always)
    static func writeUInt32(_ value: UInt32, to bytes: UnsafeMutablePointer<UInt8>, at offset: Int) {
        bytes[offset] = UInt8(truncatingIfNeeded: value >> 24)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: value >> 16)
        bytes[offset + 2] = UInt8(truncatingIfNeeded: value >> 8)
        bytes[offset + 3] = UInt8(truncatingIfNeeded: value)
    }
}

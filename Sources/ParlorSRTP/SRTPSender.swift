/// The protecting side of one session's SRTP: made once per session and direction from the master key and salt
/// we send with, it protects RTP and SRTCP packets in place. Keeps per SSRC the rollover counter, the indices it
/// already used (protecting one twice would reuse keystream, so that is refused as a replay, as libsrtp does) and
/// the next SRTCP index. Not thread-safe: it belongs to its session's thread.
public final class SRTPSender: SRTPContext {
    override class var protects: Bool { true }

    /// Protects the RTP packet in `buffer[0..<length]`, appending the tag; `buffer` needs `profile.rtpOverhead`
    /// bytes beyond `length`. Returns the SRTP packet's length.
    public func protectRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        let packet = try RTPPacketLayout.bytes(of: buffer, length: length)
        let headerLength = try RTPPacketLayout.rtpHeaderLength(packet, length: length)
        guard buffer.count - length >= profile.rtpOverhead else { throw .noRoomForTag(needed: length + profile.rtpOverhead, capacity: buffer.count) }
        let sequence = RTPPacketLayout.readUInt16(packet, at: 2)
        let ssrc = RTPPacketLayout.readUInt32(packet, at: 8)
        let position = try streams.positionAddingIfNeeded(ssrc)
        // One read and one write of the stream: each access to a class's stored array is checked for exclusivity.
        var stream = streams[position]
        var estimator = stream.rtpIndex ?? RTPIndexEstimator(firstSequence: sequence)
        guard let index = estimator.estimate(sequence: sequence) else { throw .tooOld(index: UInt64(sequence)) }
        guard index < (1 << 48) - 1 else { throw .indexExhausted }
        try stream.rtpWindow.check(index)
        let protectedLength = try transform.protectRTP(packet, length: length, headerLength: headerLength, ssrc: ssrc, index: index)
        estimator.accept(index: index)
        stream.rtpIndex = estimator
        stream.rtpWindow.accept(index)
        streams[position] = stream
        return protectedLength
    }

    /// Protects `packet` in place, appending the tag. Reserve `profile.rtpOverhead` bytes of capacity beyond the
    /// packet (`reserveCapacity`) and the append does not allocate. On an error `packet` is unchanged.
    public func protectRTP(_ packet: inout [UInt8]) throws(SRTPError) {
        try SRTPPacketTransform.inPlace(&packet, growth: profile.rtpOverhead) { (bytes, length) throws(SRTPError) in
            try protectRTP(bytes, length: length)
        }
    }

    /// Protects the RTCP packet (compound or not) in `buffer[0..<length]`: encrypts all after the first 8 bytes and
    /// appends the E-flag with the stream's next SRTCP index, and the tag; `buffer` needs `profile.rtcpOverhead`
    /// bytes beyond `length`. Returns the SRTCP packet's length.
    public func protectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        let packet = try RTPPacketLayout.bytes(of: buffer, length: length)
        try RTPPacketLayout.checkRTCPHeader(packet, length: length)
        guard buffer.count - length >= profile.rtcpOverhead else { throw .noRoomForTag(needed: length + profile.rtcpOverhead, capacity: buffer.count) }
        let ssrc = RTPPacketLayout.readUInt32(packet, at: 4)
        let position = try streams.positionAddingIfNeeded(ssrc)
        let index = streams[position].nextRTCPIndex
        guard index < 0x7FFF_FFFF else { throw .indexExhausted }
        let protectedLength = try transform.protectRTCP(packet, length: length, ssrc: ssrc, index: index)
        streams[position].nextRTCPIndex = index + 1
        return protectedLength
    }

    /// Protects `packet` in place; reserve `profile.rtcpOverhead` bytes of capacity beyond it to avoid allocating.
    public func protectRTCP(_ packet: inout [UInt8]) throws(SRTPError) {
        try SRTPPacketTransform.inPlace(&packet, growth: profile.rtcpOverhead) { (bytes, length) throws(SRTPError) in
            try protectRTCP(bytes, length: length)
        }
    }

    /// The SRTCP index the next RTCP packet of `ssrc` gets (tests, and the RFC 7714 §17 vector's index 0x5d4).
    public func nextRTCPIndex(ssrc: UInt32) -> UInt32 {
        guard let position = streams.position(of: ssrc) else { return 0 }
        return streams[position].nextRTCPIndex
    }

    /// Sets the next SRTCP index of `ssrc` (a test hook for vectors that start elsewhere than 0).
    func setNextRTCPIndex(_ index: UInt32, ssrc: UInt32) throws(SRTPError) {
        let position = try streams.positionAddingIfNeeded(ssrc)
        streams[position].nextRTCPIndex = index
    }
}

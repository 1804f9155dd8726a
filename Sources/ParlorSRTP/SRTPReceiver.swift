/// The unprotecting side of one session's SRTP: made once per session and direction from the master key and salt
/// the peer sends with, it checks and decrypts SRTP and SRTCP packets in place. Per SSRC it estimates the packet
/// index (RFC 3711 Appendix A) and keeps 128-packet replay windows for RTP and RTCP. Nothing of a refused packet
/// is kept: a new SSRC, a rollover or a window move only follow an authenticated packet. Not thread-safe: it
/// belongs to its session's thread.
public final class SRTPReceiver: SRTPContext {
    override class var protects: Bool { false }

    /// Checks and decrypts the SRTP packet in `buffer[0..<length]` in place. Returns the RTP packet's length (the
    /// tag removed). On an error the bytes may have been changed (GCM decrypts before its tag is checked): drop them.
    public func unprotectRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        let packet = try RTPPacketLayout.bytes(of: buffer, length: length)
        let tagLength = profile.tagLength
        guard length >= 12 + tagLength else { throw .tooShort(length: length) }
        let headerLength = try RTPPacketLayout.rtpHeaderLength(packet, length: length - tagLength)
        let sequence = RTPPacketLayout.readUInt16(packet, at: 2)
        let ssrc = RTPPacketLayout.readUInt32(packet, at: 8)
        let position = streams.position(of: ssrc)
        // One read and one write of the stream: each access to a class's stored array is checked for exclusivity.
        var stream = if let position { streams[position] } else { SRTPStream(ssrc: ssrc) }
        var estimator = stream.rtpIndex ?? RTPIndexEstimator(firstSequence: sequence)
        guard let index = estimator.estimate(sequence: sequence) else { throw .tooOld(index: UInt64(sequence)) }
        try stream.rtpWindow.check(index)
        let rtpLength = try transform.unprotectRTP(packet, length: length, headerLength: headerLength, ssrc: ssrc, index: index)
        estimator.accept(index: index)
        stream.rtpIndex = estimator
        stream.rtpWindow.accept(index)
        if let position { streams[position] = stream } else { try addStream(stream) }
        return rtpLength
    }

    /// Checks and decrypts `packet` in place, removing the tag. On an error `packet` must be dropped.
    public func unprotectRTP(_ packet: inout [UInt8]) throws(SRTPError) {
        try SRTPPacketTransform.inPlace(&packet, growth: 0) { (bytes, length) throws(SRTPError) in try unprotectRTP(bytes, length: length) }
    }

    /// Checks and decrypts the SRTCP packet in `buffer[0..<length]` in place: reads the E-flag and 31-bit index,
    /// refuses a replayed or too old index, checks the tag, decrypts when E is set. Returns the RTCP packet's length.
    public func unprotectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        let packet = try RTPPacketLayout.bytes(of: buffer, length: length)
        guard length >= RTPPacketLayout.rtcpClearLength + 4 + profile.tagLength else { throw .tooShort(length: length) }
        try RTPPacketLayout.checkRTCPHeader(packet, length: length)
        let ssrc = RTPPacketLayout.readUInt32(packet, at: 4)
        // Counter mode puts E||index before the tag (RFC 3711 §3.4), GCM after it (RFC 7714 §9, Figure 3).
        let indexOffset: Int
        switch transform {
        case .counterMode: indexOffset = length - profile.tagLength - 4
        case .gcm: indexOffset = length - 4
        }
        let word = RTPPacketLayout.readUInt32(packet, at: indexOffset)
        let encrypted = word & 0x8000_0000 != 0
        let index = word & 0x7FFF_FFFF
        let position = streams.position(of: ssrc)
        var stream = if let position { streams[position] } else { SRTPStream(ssrc: ssrc) }
        try stream.rtcpWindow.check(UInt64(index))
        let rtcpLength = try transform.unprotectRTCP(packet, length: length, ssrc: ssrc, index: index, encrypted: encrypted)
        stream.rtcpWindow.accept(UInt64(index))
        if let position { streams[position] = stream } else { try addStream(stream) }
        return rtcpLength
    }

    /// Checks and decrypts `packet` in place, removing the E-flag, index and tag. On an error `packet` must be dropped.
    public func unprotectRTCP(_ packet: inout [UInt8]) throws(SRTPError) {
        try SRTPPacketTransform.inPlace(&packet, growth: 0) { (bytes, length) throws(SRTPError) in try unprotectRTCP(bytes, length: length) }
    }

    /// Keeps a new SSRC's stream, once its first packet authenticated.
    private func addStream(_ stream: SRTPStream) throws(SRTPError) {
        try streams.add(stream)
    }
}

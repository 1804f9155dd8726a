/// What one direction of a session keeps per SSRC (each SSRC is its own cryptographic context, RFC 3711 §3.2.3):
/// the RTP index estimator and replay window, the SRTCP replay window, and the next SRTCP index to send.
struct SRTPStream {
    let ssrc: UInt32
    var rtpIndex: RTPIndexEstimator?
    var rtpWindow = SRTPReplayWindow()
    var rtcpWindow = SRTPReplayWindow()
    /// RFC 3711 §3.3.2: zero before the first SRTCP packet, one more after each.
    var nextRTCPIndex: UInt32 = 0
}

/// The streams of one context, searched linearly: a WebRTC session carries a handful of SSRCs, and a short array
/// beats hashing for that. Capped so that a peer cannot grow it without bound; a receiver only adds an SSRC after
/// one of its packets authenticated. Adding a stream may allocate (array growth); a packet of a known stream never.
struct SRTPStreamTable {
    static let capacity = 256

    private(set) var streams: [SRTPStream] = []
    private var lastPosition = 0

    init() { streams.reserveCapacity(8) }

    /// The position of `ssrc`'s stream, if it has one.
    @inline(__always)
    mutating func position(of ssrc: UInt32) -> Int? {
        if lastPosition < streams.count, streams[lastPosition].ssrc == ssrc { return lastPosition }
        for position in streams.indices where streams[position].ssrc == ssrc {
            lastPosition = position
            return position
        }
        return nil
    }

    /// The position of `ssrc`'s stream, made if it has none.
    mutating func positionAddingIfNeeded(_ ssrc: UInt32) throws(SRTPError) -> Int {
        if let position = position(of: ssrc) { return position }
        try add(SRTPStream(ssrc: ssrc))
        return lastPosition
    }

    /// Adds a stream whose SSRC has none yet.
    mutating func add(_ stream: SRTPStream) throws(SRTPError) {
        guard streams.count < Self.capacity else { throw .tooManyStreams(limit: Self.capacity) }
        streams.append(stream)
        lastPosition = streams.count - 1
    }

    subscript(position: Int) -> SRTPStream {
        get { streams[position] }
        _modify { yield &streams[position] }
    }
}

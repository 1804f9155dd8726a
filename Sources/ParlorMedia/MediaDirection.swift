/// An m-line's direction attribute (RFC 8866 §6.7), from the point of view of whoever wrote the description.
public enum MediaDirection: String, Sendable, Hashable, CaseIterable {
    case sendrecv, sendonly, recvonly, inactive

    public var sends: Bool { self == .sendrecv || self == .sendonly }
    public var receives: Bool { self == .sendrecv || self == .recvonly }

    public init(sends: Bool, receives: Bool) {
        switch (sends, receives) {
        case (true, true): self = .sendrecv
        case (true, false): self = .sendonly
        case (false, true): self = .recvonly
        case (false, false): self = .inactive
        }
    }

    /// The answer's direction when the answerer wants `wanted` and the offer says `self` (RFC 3264 §6.1): one can
    /// only send what the other receives.
    public func answer(wanting wanted: MediaDirection) -> MediaDirection {
        MediaDirection(sends: wanted.sends && receives, receives: wanted.receives && sends)
    }
}

/// The DTLS role SDP's `a=setup` announces (RFC 4145, RFC 5763 §5).
public enum DTLSSetup: String, Sendable, Hashable {
    case actpass, active, passive
}

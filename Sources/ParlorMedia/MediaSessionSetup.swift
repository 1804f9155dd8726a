/// Everything the media loop needs to open one client's session, decided on the thread that answered the offer
/// (the rooms thread): who it is, the ICE and DTLS parameters of both SDPs, and the receive slots. Plain data.
public struct MediaSessionSetup: Sendable, Equatable {
    /// Chosen by the caller, unique per server; events name sessions by it.
    public var id: UInt64
    /// The group whose members hear each other (a room), and the member this session belongs to. Audio goes only
    /// between sessions of one group, never between two sessions of one member.
    public var group: String
    public var member: String
    public var local: ICECredentials
    public var remoteUsernameFragment: String
    /// The peer's ICE password: our own checks (consent, RFC 7675) are signed with it.
    public var remotePassword: String
    public var remoteFingerprint: DTLSFingerprint
    /// The offer's first m-line (the microphone) sends: the client has a track.
    public var sends: Bool
    /// The id of the audio-level extension in the client's packets, if it offered one.
    public var audioLevelExtensionID: Int?
    /// The Opus payload type the client agreed to receive (forwarded packets carry it).
    public var payloadType: UInt8
    public var slots: [Slot]

    /// One receive slot: the m-line it is, and the SSRC the server sends it with.
    public struct Slot: Sendable, Equatable {
        public var mid: String
        public var ssrc: UInt32
    }
}

extension MediaSessionSetup {
    /// The peer's ICE credentials.
    var remoteICE: ICECredentials { ICECredentials(usernameFragment: remoteUsernameFragment, password: remotePassword) }
}

/// One slot's assignment as the media loop reports it: the member whose audio the slot carries, or nil.
public struct MediaSlotAssignment: Sendable, Equatable {
    public var mid: String
    public var member: String?

    public init(mid: String, member: String?) {
        self.mid = mid
        self.member = member
    }
}

/// What the media loop tells its owner (the rooms thread), in the order it happened.
public enum MediaServerEvent: Sendable, Equatable {
    /// A member of `group` started or stopped speaking, by the audio level of what it sends.
    case speaking(group: String, member: String, on: Bool)
    /// Which member each of a session's slots carries changed.
    case slots(session: UInt64, group: String, [MediaSlotAssignment])
    /// The media loop ended a session by itself: ICE never completed, its address was lost for too long, or DTLS
    /// failed or was closed. The owner forgets it (the client may offer again).
    case ended(session: UInt64, group: String)
}

extension MediaServer {
    /// The answer to a client's offer and the session it opens, on any thread (only immutable state is read):
    /// the first m-line is the client's microphone, answered `recvonly` when `maySend` (else `inactive`); each
    /// further one is a receive slot, answered `sendonly` with its own SSRC and `a=msid:slot-<mid>`. Refuses an
    /// offer the media path cannot use, or with more slots than `configuration.slots`.
    ///
    /// `previous`: the setup this offer renegotiates (the same client's earlier offer). Its slot SSRCs are kept,
    /// and so are our ICE credentials unless the client restarts ICE (a new ufrag), as JSEP requires; `open` then
    /// keeps the session's DTLS association and SRTP contexts (the browser keeps its own).
    public func answer(offer text: String, session id: UInt64, group: String, member: String, maySend: Bool,
                       previous: MediaSessionSetup? = nil) throws(SDPError) -> (sdp: String, setup: MediaSessionSetup) {
        try answer(offer: SessionDescription(parsing: text), session: id, group: group, member: member, maySend: maySend, previous: previous)
    }

    /// The same, for an offer already parsed.
    public func answer(offer: SessionDescription, session id: UInt64, group: String, member: String, maySend: Bool,
                       previous: MediaSessionSetup? = nil) throws(SDPError) -> (sdp: String, setup: MediaSessionSetup) {
        guard let microphone = offer.media.first else { throw .missing("an audio m-line") }
        guard offer.media.count <= 1 + configuration.slots else {
            throw .missing("at most \(configuration.slots) receive m-lines after the microphone's (got \(offer.media.count - 1))")
        }
        guard let remoteICE = offer.remoteICE else { throw .missing("a=ice-ufrag/a=ice-pwd") }
        guard !offer.remoteFingerprints.isEmpty else { throw .missing("a=fingerprint") }
        guard let remoteFingerprint = offer.remoteFingerprint else { throw .missing("a sha-256, sha-384 or sha-512 a=fingerprint") }
        var sources: [String: ServerSessionDescription.SendSource] = [:]
        var slots: [MediaSessionSetup.Slot] = []
        var usedSSRCs = Set(previous?.slots.map(\.ssrc) ?? [])
        for media in offer.media.dropFirst() {
            guard let mid = media.mid else { throw .missing("a=mid") }
            var ssrc = previous?.slots.first { $0.mid == mid }?.ssrc ?? Self.randomSSRC()
            while usedSSRCs.contains(ssrc), previous?.slots.first(where: { $0.mid == mid })?.ssrc != ssrc { ssrc = Self.randomSSRC() }
            usedSSRCs.insert(ssrc)
            sources[mid] = ServerSessionDescription.SendSource(ssrc: ssrc, cname: "parlor", streamID: "slot-\(mid)", trackID: "slot-\(mid)-audio")
            slots.append(MediaSessionSetup.Slot(mid: mid, ssrc: ssrc))
        }
        let restartsICE = previous?.remoteUsernameFragment != remoteICE.usernameFragment
        let local = restartsICE ? ICECredentials.random() : previous!.local
        let microphoneMid = microphone.mid
        let answer = try ServerSessionDescription.answer(
            to: offer, sessionID: id, ice: local, fingerprint: certificate.fingerprint, candidates: candidates,
            sendSources: sources) { mid in
                mid == microphoneMid ? (maySend ? .recvonly : .inactive) : .sendonly
            }
        // Slots the offer does not let us send on (inactive, sendonly) carry nothing.
        let sending = Set(answer.sections.filter { $0.direction.sends }.map(\.mid))
        slots.removeAll { !sending.contains($0.mid) }
        let setup = MediaSessionSetup(id: id, group: group, member: member, local: local,
                                      remoteUsernameFragment: remoteICE.usernameFragment, remotePassword: remoteICE.password,
                                      remoteFingerprint: remoteFingerprint,
                                      sends: maySend && microphone.direction.sends,
                                      audioLevelExtensionID: microphone.audioLevelExtensionID,
                                      payloadType: (answer.sections.dropFirst().first ?? answer.sections[0]).opus.payloadType, slots: slots)
        return (answer.text, setup)
    }

    static func randomSSRC() -> UInt32 {
        var ssrc: UInt32 = 0
        while ssrc == 0 { ssrc = UInt32.random(in: 1...UInt32.max) }
        return ssrc
    }
}

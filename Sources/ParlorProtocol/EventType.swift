/// Every message the server sends without a `tid`: the session greeting, room events, and relayed signalling.
/// Media and signalling events carry the name of the request that caused them, so those spellings are the
/// request's (`RequestType`), not repeated here. A new event is a case here and a row in docs/protocol.md's
/// "Event types" (`ProtocolVocabularyTests` checks).
public enum EventType: CaseIterable, Sendable, RawRepresentable {
    /// The first message on every connection: the session id and the user.
    case sessionSuccess
    case memberJoined
    case memberLeft
    /// A member turned its audio on or off.
    case memberMedia
    case audioMuteOn
    case audioMuteOff
    /// Speaking changes: broadcast, never stored, no event id.
    case audioSpeakingOn
    case audioSpeakingOff
    /// Signalling relayed to the target member's connections only; never stored.
    case rtcOffer
    case rtcAnswer
    case rtcIce
    /// Which member each receive slot of this connection's media session carries (--media sfu); never stored.
    case mediaSlots
    /// The room's media home (the node serving its audio) stopped: offer again (--media sfu, several nodes).
    case mediaRestart
    /// A member raised or lowered its hand (stored).
    case memberHand
    /// A member's role changed (stored); spelled like the request that causes it.
    case memberRole
    /// The room was locked or unlocked (stored).
    case roomLocked
    /// A chat message (stored).
    case messageText
    /// An emoji reaction: broadcast, never stored, no event id.
    case reaction
    /// A stage room switched between full and summary presence (issue 37): never stored, no event id.
    case roomPresence
    /// A summary-mode stage room's listeners who came and went since the last one, coalesced: never stored.
    case roomAudience
    /// A recording of the room started or stopped (stored).
    case roomRecording
    /// A member's key message in an encrypted room (issue 40), relayed to the room's other joined members' connections
    /// as it came: never stored, no event id. Spelled like the request.
    case e2eeKey
    /// The room's live stream went public or private (stored, with an id), or its listener count changed (at most once a
    /// second; not stored).
    case roomStream

    public var rawValue: String {
        switch self {
        case .sessionSuccess: "session:success"
        case .memberJoined: "member:joined"
        case .memberLeft: "member:left"
        case .memberMedia: "member:media"
        case .audioMuteOn: RequestType.audioMuteOn.rawValue
        case .audioMuteOff: RequestType.audioMuteOff.rawValue
        case .audioSpeakingOn: RequestType.audioSpeakingOn.rawValue
        case .audioSpeakingOff: RequestType.audioSpeakingOff.rawValue
        case .rtcOffer: RequestType.rtcOffer.rawValue
        case .rtcAnswer: RequestType.rtcAnswer.rawValue
        case .rtcIce: RequestType.rtcIce.rawValue
        case .mediaSlots: "media:slots"
        case .mediaRestart: "media:restart"
        case .memberHand: "member:hand"
        case .memberRole: RequestType.memberRole.rawValue
        case .roomLocked: "room:locked"
        case .messageText: "message:text"
        case .reaction: "reaction"
        case .roomPresence: "room:presence"
        case .roomAudience: "room:audience"
        case .roomRecording: "room:recording"
        case .e2eeKey: RequestType.e2eeKey.rawValue
        case .roomStream: "room:stream"
        }
    }

    public init?(rawValue: String) {
        guard let match = Self.allCases.first(where: { $0.rawValue == rawValue }) else { return nil }
        self = match
    }
}

import ParlorProtocol

/// A client request the rooms thread serves, already checked for shape by the protocol layer.
public enum RoomRequest: Sendable {
    /// `e2ee`: the client states that it encrypts (required in an encrypted room; a statement, not a proof).
    case join(cid: String, e2ee: Bool = false)
    case leave(cid: String)
    case members(cid: String, query: MembersQuery)
    case events(cid: String, since: Int64, pageSize: Int)
    case resume(sessionID: String, lastEventIDs: [(cid: String, lastEventID: Int64)])
    /// rtc:offer, rtc:answer or rtc:ice, relayed to the connections of member `to`; never stored.
    case signal(kind: RequestType, cid: String, to: String, payload: JSONObject)
    case media(cid: String, change: MediaChange)
    /// This connection's peer connection with the forwarding unit in room `cid` (--media sfu): open or replace it
    /// with the client's SDP offer, or end it.
    case mediaOffer(cid: String, sdp: String, e2ee: Bool = false)
    case mediaClose(cid: String)
    /// Receive a room's events without being a member of it (scripts, dashboards); `unwatch` stops.
    case watch(cid: String)
    case unwatch(cid: String)
    /// Hands, roles, moderation, chat and reactions (RoomContext+Stage.swift).
    case stage(cid: String, action: StageAction)
    /// room:record:start (`start`) or room:record:stop, optionally naming the recording to stop.
    case record(cid: String, start: Bool, recordingID: String?)
    /// e2ee:key (issue 40): the body as sent (already within its size bound), relayed unread to the room's other
    /// joined members; never stored.
    case e2eeKey(cid: String, body: JSONObject)
    /// room:stream:public: the room's live stream open to anyone with its link, or (false) to members only.
    case streamPublic(cid: String, isPublic: Bool)
    /// Answered by the rooms thread in order with everything else: its reply means all sent before it has arrived.
    case ping

    /// The request's `type`, which its success reply echoes as `type:success`.
    public var type: RequestType {
        switch self {
        case .join: .conversationJoin
        case .leave: .conversationLeave
        case .members: .conversationMembers
        case .events: .conversationEvents
        case .resume: .sessionResume
        case .signal(let kind, _, _, _): kind
        case .media(_, let change): change.requestType
        case .mediaOffer: .mediaOffer
        case .mediaClose: .mediaClose
        case .watch: .conversationWatch
        case .unwatch: .conversationUnwatch
        case .ping: .sessionPing
        case .stage(_, let action): action.requestType
        case .record(_, let start, _): start ? .roomRecordStart : .roomRecordStop
        case .e2eeKey: .e2eeKey
        case .streamPublic: .roomStreamPublic
        }
    }
}

public struct MembersQuery: Sendable {
    public var pageSize: Int
    public var cursor: PageCursor?
    public var descending: Bool
    /// nil: JOINED only, the default; a state filter lists those instead (LEFT shows history).
    public var state: MemberState?
    public var allStates: Bool
    /// Only joined members whose hand is up, in the order they raised it.
    public var handsRaised: Bool
    /// Only joined members with this role, in join order (how a summary-mode room's audience pages, issue 37).
    public var role: MemberRole?

    public init(pageSize: Int, cursor: PageCursor?, descending: Bool, state: MemberState?, allStates: Bool = false,
                handsRaised: Bool = false, role: MemberRole? = nil) {
        self.pageSize = pageSize
        self.cursor = cursor
        self.descending = descending
        self.state = state
        self.allStates = allStates
        self.handsRaised = handsRaised
        self.role = role
    }
}

/// What POST /rooms asks for, validated.
public struct NewRoom: Sendable {
    public var name: String?
    public var displayName: String
    public var ttl: Int64?
    public var maxMembers: Int64?
    public var createdBy: User?
    /// The creating client's `ClientAddress.limitKey`, which the per-address cap counts; nil is not counted.
    public var createdFrom: String?
    public var mode: RoomMode = .open
    /// End-to-end encrypted (issue 40).
    public var e2ee = false

    public init(name: String?, displayName: String, ttl: Int64?, maxMembers: Int64?, createdBy: User?, createdFrom: String? = nil) {
        self.name = name
        self.displayName = displayName
        self.ttl = ttl
        self.maxMembers = maxMembers
        self.createdBy = createdBy
        self.createdFrom = createdFrom
    }
}

/// What a chat message carries: text in a normal room, ciphertext (standard base64 the server cannot read) in an
/// end-to-end encrypted one (issue 40). Stored and sent as the event body's `text` or `ciphertext`.
public enum ChatContent: Sendable {
    case text(String)
    case ciphertext(String)

    public var field: (name: String, value: String) {
        switch self {
        case .text(let text): ("text", text)
        case .ciphertext(let ciphertext): ("ciphertext", ciphertext)
        }
    }
}

/// A change of a member's audio, as requested by the member.
public enum MediaChange: Sendable {
    case enable, disable
    case mute(Bool)
    case speaking(Bool)

    public var requestType: RequestType {
        switch self {
        case .enable: .audioEnable
        case .disable: .audioDisable
        case .mute(let on): on ? .audioMuteOn : .audioMuteOff
        case .speaking(let on): on ? .audioSpeakingOn : .audioSpeakingOff
        }
    }

    /// The event the change is broadcast as.
    public var eventType: EventType {
        switch self {
        case .enable, .disable: .memberMedia
        case .mute(let on): on ? .audioMuteOn : .audioMuteOff
        case .speaking(let on): on ? .audioSpeakingOn : .audioSpeakingOff
        }
    }
}

/// A stage-room request: a member's own hand, chat and reactions, or a moderator's action on the room or a member.
public enum StageAction: Sendable {
    case raiseHand
    /// One's own hand (nil), or a moderator lowers a member's.
    case lowerHand(memberID: String?)
    case setRole(memberID: String, role: MemberRole)
    case ban(userID: String, seconds: Int64)
    case muteAll
    case lock(Bool)
    /// Text already checked by `TextRules.checkChat`, or an encrypted room's ciphertext checked by
    /// `TextRules.checkCiphertext`.
    case message(ChatContent)
    /// An emoji already checked by `TextRules.checkReaction`.
    case reaction(emoji: String)

    public var requestType: RequestType {
        switch self {
        case .raiseHand: .memberHandRaise
        case .lowerHand: .memberHandLower
        case .setRole: .memberRole
        case .ban: .memberBan
        case .muteAll: .roomMuteAll
        case .lock(let locked): locked ? .roomLock : .roomUnlock
        case .message: .messageSend
        case .reaction: .reactionSend
        }
    }

    /// Whether only a moderator may ask for it (lowering one's own hand is anyone's).
    public var needsModerator: Bool {
        switch self {
        case .raiseHand, .message, .reaction: false
        case .lowerHand(let memberID): memberID != nil
        case .setRole, .ban, .muteAll, .lock: true
        }
    }
}

import Foundation

/// One membership of a room: a user who joined, and maybe left.
public struct Member: Sendable, Hashable, Identifiable {
    public enum State: Sendable, Hashable {
        case joined
        case left
        /// A state this client does not know yet, as the server spelled it.
        case other(String)

        init(_ text: String) {
            switch text {
            case "JOINED": self = .joined
            case "LEFT": self = .left
            default: self = .other(text)
            }
        }
    }

    public struct AudioSettings: Sendable, Hashable {
        public let enabled: Bool
        public let muted: Bool

        public init(enabled: Bool, muted: Bool) {
            self.enabled = enabled
            self.muted = muted
        }

        init(json: JSONValue) {
            self.init(enabled: json["enabled"]?.boolValue ?? false, muted: json["muted"]?.boolValue ?? false)
        }
    }

    public let memberID: String
    public let user: ParlorUser
    public let state: State
    public let joinedAt: Date?
    public let leftAt: Date?
    public let audio: AudioSettings
    /// What the member may do in the room (nil from servers before stage rooms).
    public let role: MemberRole?
    /// Whether its hand is up, and since when (stage rooms).
    public let handRaised: Bool
    public let handRaisedAt: Date?

    public var id: String { memberID }

    init(json: JSONValue) throws(ParlorError) {
        let fields = try JSONFields(json, "member")
        memberID = try fields.string("member_id")
        user = try ParlorUser(json: fields["user"] ?? .null, "member.user")
        state = State(try fields.string("state"))
        joinedAt = fields["timestamp"]?["joined"]?.stringValue.flatMap(ISO8601.parse)
        leftAt = fields["timestamp"]?["left"]?.stringValue.flatMap(ISO8601.parse)
        audio = AudioSettings(json: fields["media"]?["audio_settings"] ?? .null)
        role = fields["role"]?.stringValue.flatMap(MemberRole.init(rawValue:))
        handRaised = fields["hand_raised"]?.boolValue ?? false
        handRaisedAt = fields["hand_raised_at"]?.stringValue.flatMap(ISO8601.parse)
    }
}

/// What `join` returns: your membership and the room's members at the moment you joined.
public struct Membership: Sendable, Hashable {
    public let memberID: String
    public let roomID: String
    /// Everyone joined at that moment, you included, oldest first (in a summary-mode stage room, see `presence`,
    /// the stage, the raised hands, you and the first page of the audience).
    public let members: [Member]
    /// The room's newest event id when the snapshot was taken. Events after it arrive on `ParlorSession.events`
    /// (your own `member:joined`, with this very id, is delivered there too).
    public let lastEventID: Int64
    /// Your role in the room, its mode and whether it is locked (nil from servers before stage rooms).
    public let role: MemberRole?
    public let mode: RoomMode?
    public let locked: Bool
    /// The room is end-to-end encrypted (issue 40): audio and chat must be encrypted by its members.
    public let e2ee: Bool
    /// A stage room's presence mode (nil: an open room, or a server before issue 37). In `summary`, `members` is the
    /// stage, the raised hands, you and the first page of the audience; `audienceCount` listeners are joined, and when
    /// `audienceCursor` is set the rest page through `ParlorSession.members(in:cursor:role: .listener)`.
    public let presence: PresenceMode?
    public let audienceCount: Int?
    public let audienceCursor: String?
    /// The recording running when you joined (nil: none, or a server before issue 38).
    public let recording: RecordingStatus?
    /// The room's live stream when you joined (a stage room's always; an open room's while it is public or heard).
    public let stream: LiveStreamStatus?

    init(json: JSONValue) throws(ParlorError) {
        let fields = try JSONFields(json, "join reply")
        presence = fields["presence"]?.stringValue.flatMap(PresenceMode.init(rawValue:))
        audienceCount = fields["audience_count"]?.integerValue.map { Int($0) }
        audienceCursor = fields["audience_cursor"]?.stringValue
        recording = RecordingStatus(joinReply: fields["recording"])
        stream = LiveStreamStatus(fields["stream"])
        role = fields["role"]?.stringValue.flatMap(MemberRole.init(rawValue:))
        mode = fields["mode"]?.stringValue.flatMap(RoomMode.init(rawValue:))
        locked = fields["locked"]?.boolValue ?? false
        e2ee = fields["e2ee"]?.boolValue ?? false
        memberID = try fields.string("member_id")
        roomID = try fields.string("cid")
        members = try fields.array("members").map { (member) throws(ParlorError) in try Member(json: member) }
        lastEventID = try fields.integer("last_event_id")
    }
}

/// One page of a room's members (conversation:members).
public struct MembersPage: Sendable, Hashable {
    /// Oldest first (ascending), or newest first.
    public enum Order: String, Sendable {
        case ascending = "asc"
        case descending = "desc"
    }

    /// Which memberships to list.
    public enum StateFilter: String, Sendable {
        case joined = "JOINED"
        case left = "LEFT"
        case all = "ALL"
    }

    public let roomID: String
    public let members: [Member]
    /// Pass to `members(in:cursor:)` for the next page; nil on the last page.
    public let cursor: String?

    init(json: JSONValue) throws(ParlorError) {
        let fields = try JSONFields(json, "members reply")
        roomID = try fields.string("cid")
        members = try fields.array("members").map { (member) throws(ParlorError) in try Member(json: member) }
        cursor = fields["cursor"]?.stringValue
    }
}

import Foundation

/// Something that happened in a room, live or read back from its history.
///
/// Stored events (member:joined, member:left, member:media, audio:mute:*) have an `id` counting 1, 2, 3… per room
/// with no gaps. Transient ones (audio:speaking:*, rtc:* signalling, e2ee:key) have no id: they are neither stored
/// nor replayed. An encrypted room's key message arrives as `eventType == .e2eeKey`, with `from` the sending member
/// and `body` the sender's key message as it sent it.
public struct RoomEvent: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case memberJoined
        case memberLeft
        /// Any other event type, as the server named it ("member:media", "audio:…", "rtc:…", whatever comes later).
        case other(String)

        init(_ name: String) {
            switch EventType(rawValue: name) {
            case .memberJoined?: self = .memberJoined
            case .memberLeft?: self = .memberLeft
            default: self = .other(name)
            }
        }
    }

    public let type: Kind
    /// The type as sent: "member:joined", … (compare with `EventType`: stage-room events stay `.other` so that
    /// switches over `Kind` written before them still compile).
    public let typeName: String
    /// The type as this client knows it, nil for a type newer than the client.
    public var eventType: EventType? { EventType(rawValue: typeName) }
    public let roomID: String
    /// The room's event sequence number; nil for transient events.
    public let id: Int64?
    /// The member id that caused the event, if any.
    public let from: String?
    /// `body.member_id`: whose membership the event is about.
    public let memberID: String?
    /// `body.user`.
    public let user: ParlorUser?
    /// `body.reason` of member:left: "left", "dropped" (grace period ran out), "kicked", "room_closed".
    public let reason: String?
    /// `body.media.audio_settings` of member:media and audio:mute:* events.
    public let media: Member.AudioSettings?
    public let timestamp: Date?
    /// Stage rooms: `raised` of member:hand, `role` of member:role, `locked` of room:locked, `text` of message:text,
    /// `emoji` of reaction, and `by` (the moderator's member id; nil for the server, an admin or the creator over HTTP).
    public let raised: Bool?
    public let role: MemberRole?
    public let locked: Bool?
    public let text: String?
    /// message:text of an end-to-end encrypted room: the sender's ciphertext (standard base64), which only members
    /// holding its key can read (docs/e2ee.md, "Chat"); `text` is nil then.
    public let ciphertext: String?
    public let emoji: String?
    public let by: String?
    /// `room:presence` of a stage room: it switched between full and summary presence (issue 37).
    public let presence: PresenceChange?
    /// `room:audience` of a summary-mode stage room: listeners who came and went, coalesced.
    public let audience: AudienceUpdate?
    /// `room:recording`: a recording of the room started or stopped (issue 38).
    public let recording: RecordingStatus?
    /// `room:stream`: the live stream went public or private, or its listener count changed (issue 38).
    public let stream: LiveStreamStatus?
    public let body: JSONValue
    /// The whole event as received.
    public let raw: JSONValue

    init(json: JSONValue) throws(ParlorError) {
        let fields = try JSONFields(json, "event")
        typeName = try fields.string("type")
        type = Kind(typeName)
        roomID = try fields.string("cid")
        id = fields["id"]?.integerValue
        from = fields["from"]?.stringValue
        timestamp = fields.date("timestamp")
        body = fields["body"] ?? .object([:])
        memberID = body["member_id"]?.stringValue
        user = body["user"].flatMap { try? ParlorUser(json: $0, "event.body.user") }
        reason = body["reason"]?.stringValue
        media = body["media"]?["audio_settings"].map(Member.AudioSettings.init(json:))
        raised = body["raised"]?.boolValue
        role = body["role"]?.stringValue.flatMap(MemberRole.init(rawValue:))
        locked = body["locked"]?.boolValue
        text = body["text"]?.stringValue
        ciphertext = body["ciphertext"]?.stringValue
        emoji = body["emoji"]?.stringValue
        by = body["by"]?.stringValue
        presence = typeName == EventType.roomPresence.rawValue ? PresenceChange(body: body) : nil
        audience = typeName == EventType.roomAudience.rawValue ? AudienceUpdate(body: body) : nil
        recording = typeName == EventType.roomRecording.rawValue ? RecordingStatus(event: body) : nil
        stream = typeName == EventType.roomStream.rawValue ? LiveStreamStatus(body) : nil
        raw = json
    }
}

/// One page of a room's history (conversation:events).
public struct EventsPage: Sendable, Hashable {
    public let roomID: String
    /// Oldest first.
    public let events: [RoomEvent]
    /// Set when more events follow: pass `nextSince` as `since` to read on.
    public let cursor: String?

    public var nextSince: Int64? { cursor.flatMap { Int64($0) } }

    init(json: JSONValue) throws(ParlorError) {
        let fields = try JSONFields(json, "events reply")
        roomID = try fields.string("cid")
        events = try fields.array("events").map { (event) throws(ParlorError) in try RoomEvent(json: event) }
        cursor = fields["cursor"]?.stringValue
    }
}

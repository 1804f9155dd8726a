import ParlorProtocol

/// What happened to rooms, reported after each commit for integrations such as webhooks.
public enum RoomNotice: Sendable {
    case roomStarted(room: RoomSummary)
    case roomFinished(room: RoomSummary, reason: String)
    case memberJoined(room: RoomSummary, member: MemberSummary, eventID: Int64)
    case memberLeft(room: RoomSummary, member: MemberSummary, reason: LeaveReason, eventID: Int64)
    /// A stage-room change (hand, role, lock, chat message): the stored event as clients see it.
    case roomEvent(room: RoomSummary, event: EventRecord)
    /// A recording started, stopped, or has its files ready (`recording`: as REST lists it).
    case recording(RecordingNotice, room: RoomSummary, recording: JSONValue)

    public var roomID: String {
        switch self {
        case .roomStarted(let room), .roomFinished(let room, _), .memberJoined(let room, _, _), .memberLeft(let room, _, _, _),
             .roomEvent(let room, _), .recording(_, let room, _): room.id
        }
    }
}

/// The recording webhooks.
public enum RecordingNotice: String, Sendable {
    case started = "recording_started"
    case stopped = "recording_stopped"
    case ready = "recording_ready"
}

public struct RoomSummary: Sendable {
    public let id: String
    public let name: String
    public let displayName: String
    public var json: JSONValue { ["id": .string(id), "name": .string(name), "display_name": .string(displayName)] }
}

public struct MemberSummary: Sendable {
    public let memberID: String
    public let user: User
    public var json: JSONValue { ["member_id": .string(memberID), "user": user.json] }
}

extension LiveRoom {
    var summary: RoomSummary { RoomSummary(id: id, name: name, displayName: displayName) }
}

extension LiveMember {
    var summary: MemberSummary { MemberSummary(memberID: id, user: user) }
}

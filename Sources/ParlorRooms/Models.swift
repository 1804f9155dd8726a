import ParlorProtocol

/// A person, identified by the name they authenticate with.
public struct User: Sendable, Hashable {
    public let id: String
    public let name: String
    public init(id: String, name: String) { self.id = id; self.name = name }
    public var json: JSONValue { ["id": .string(id), "name": .string(name)] }
}

/// A room as stored, with its live member count.
public struct RoomRecord: Sendable {
    public let id: String
    public let name: String
    public let displayName: String
    public let createdBy: String?
    public let createdAt: Int64
    public let closedAt: Int64?
    public let ttl: Int64
    public let maxMembers: Int64?
    public let memberCount: Int
    public let lastEventID: Int64
    public var mode: RoomMode = .open
    public var locked = false
    /// End-to-end encrypted (issue 40): set at creation, never changed.
    public var e2ee = false
    /// Its live stream is open to anyone with the link (room:stream:public); not in `json`.
    public var streamPublic = false

    /// The tutorial app reads `id` and `display_name`; everything else is extra and ignored by it.
    public var json: JSONValue {
        var properties: JSONObject = ["ttl": JSONValue(ttl)]
        properties["max_members"] = maxMembers.map { JSONValue($0) } ?? .null
        properties["mode"] = .string(mode.rawValue)
        properties["e2ee"] = .bool(e2ee)
        var object: JSONObject = [
            "id": .string(id), "name": .string(name), "display_name": .string(displayName),
            "created_at": .string(Timestamp.iso8601(milliseconds: createdAt)),
            "created_by": JSONValue(createdBy), "member_count": JSONValue(memberCount),
            "properties": .object(properties), "last_event_id": JSONValue(lastEventID), "locked": .bool(locked),
        ]
        if let closedAt { object["closed_at"] = .string(Timestamp.iso8601(milliseconds: closedAt)) }
        return .object(object)
    }
}

public enum MemberState: String, Sendable {
    case joined = "JOINED"
    case left = "LEFT"
}

/// Why a membership ended; sent as `reason` on member:left.
public enum LeaveReason: String, Sendable {
    case left, dropped, kicked
    case roomClosed = "room_closed"
}

/// A membership as clients see it.
public struct MemberRecord: Sendable {
    public let memberID: String
    public let user: User
    public let state: MemberState
    public let joinedAt: Int64
    public let leftAt: Int64?
    public let audioEnabled: Bool
    public let audioMuted: Bool
    /// The user's role in the room (kept per user for the room's life).
    public var role: MemberRole = .speaker
    /// When the user's hand went up; nil while it is down.
    public var handRaisedAt: Int64?

    public var json: JSONValue {
        var timestamp: JSONObject = ["joined": .string(Timestamp.iso8601(milliseconds: joinedAt))]
        if let leftAt { timestamp["left"] = .string(Timestamp.iso8601(milliseconds: leftAt)) }
        return [
            "member_id": .string(memberID), "user": user.json, "state": .string(state.rawValue),
            "timestamp": .object(timestamp),
            "media": ["audio_settings": ["enabled": .bool(audioEnabled), "muted": .bool(audioMuted)]],
            "role": .string(role.rawValue), "hand_raised": .bool(handRaisedAt != nil),
            "hand_raised_at": handRaisedAt.map { .string(Timestamp.iso8601(milliseconds: $0)) } ?? .null,
        ]
    }
}

/// One entry of a room's history.
public struct EventRecord: Sendable {
    public let roomID: String
    public let id: Int64
    public let type: String
    public let from: String?
    public let createdAt: Int64
    /// `body` as the JSON bytes the store wrote or read back: the event's frame splices them instead of encoding
    /// the body a second time. Nil for a record made from a tree alone.
    public var encodedBody: [UInt8]?
    /// The body as a tree, when the record was made from one.
    private let tree: JSONValue?

    /// The body; parsed from `encodedBody` when the record was appended from bytes alone (the fan-out splices the
    /// bytes and never asks; webhooks and other readers do).
    public var body: JSONValue {
        if let tree { return tree }
        return encodedBody.flatMap { try? JSONParser.parse($0) } ?? .object([:])
    }
}

// The initialisers stand in an extension so that the struct keeps its (private) memberwise one, which both call.
extension EventRecord {
    public init(roomID: String, id: Int64, type: String, from: String?, body: JSONValue, createdAt: Int64,
                encodedBody: [UInt8]? = nil) {
        self.init(roomID: roomID, id: id, type: type, from: from, createdAt: createdAt, encodedBody: encodedBody, tree: body)
    }

    /// An event appended from its body's bytes (a JSON object), with no tree built.
    public init(roomID: String, id: Int64, type: String, from: String?, encodedBody: [UInt8], createdAt: Int64) {
        self.init(roomID: roomID, id: id, type: type, from: from, createdAt: createdAt, encodedBody: encodedBody, tree: nil)
    }

    public var json: JSONValue {
        [
            "type": .string(type), "cid": .string(roomID), "id": JSONValue(id), "from": JSONValue(from),
            "timestamp": .string(Timestamp.iso8601(milliseconds: createdAt)), "body": body,
        ]
    }
}

import ParlorClient

/// What `EventRecorder.expect` waits for: an event kind plus optional fields, or any predicate.
public struct EventMatcher: Sendable, CustomStringConvertible {
    /// member:left's `reason`.
    public enum LeaveReason: String, Sendable {
        case left, dropped, kicked
        case roomClosed = "room_closed"
    }

    public let description: String
    private let predicate: @Sendable (RoomEvent) -> Bool

    public init(_ description: String, where predicate: @escaping @Sendable (RoomEvent) -> Bool) {
        self.description = description
        self.predicate = predicate
    }

    public func matches(_ event: RoomEvent) -> Bool { predicate(event) }

    /// member:joined, optionally of a user name, a member id, in a room.
    public static func memberJoined(name: String? = nil, memberID: String? = nil, room: String? = nil) -> EventMatcher {
        EventMatcher(describe(EventType.memberJoined.rawValue, ["name": name, "member_id": memberID, "room": room])) { event in
            event.type == .memberJoined && fits(event, name: name, memberID: memberID, room: room)
        }
    }

    /// member:left, optionally with a reason, of a user name, a member id, in a room.
    public static func memberLeft(reason: LeaveReason? = nil, name: String? = nil, memberID: String? = nil,
                                  room: String? = nil) -> EventMatcher {
        EventMatcher(describe(EventType.memberLeft.rawValue, ["reason": reason?.rawValue, "name": name, "member_id": memberID, "room": room])) { event in
            event.type == .memberLeft && (reason == nil || event.reason == reason?.rawValue)
                && fits(event, name: name, memberID: memberID, room: room)
        }
    }

    /// member:hand (stage rooms), optionally raised or lowered, of a user name, in a room.
    public static func memberHand(raised: Bool? = nil, name: String? = nil, room: String? = nil) -> EventMatcher {
        EventMatcher(describe(EventType.memberHand.rawValue, ["raised": raised.map { String($0) }, "name": name, "room": room])) { event in
            event.eventType == .memberHand && (raised == nil || event.raised == raised)
                && fits(event, name: name, memberID: nil, room: room)
        }
    }

    /// member:role (stage rooms), optionally to a role, of a user name, in a room.
    public static func memberRole(_ role: MemberRole? = nil, name: String? = nil, room: String? = nil) -> EventMatcher {
        EventMatcher(describe(EventType.memberRole.rawValue, ["role": role?.rawValue, "name": name, "room": room])) { event in
            event.eventType == .memberRole && (role == nil || event.role == role) && fits(event, name: name, memberID: nil, room: room)
        }
    }

    /// message:text (a chat message), optionally with this text, from a user name, in a room.
    public static func message(text: String? = nil, name: String? = nil, room: String? = nil) -> EventMatcher {
        EventMatcher(describe(EventType.messageText.rawValue, ["text": text, "name": name, "room": room])) { event in
            event.eventType == .messageText && (text == nil || event.text == text) && fits(event, name: name, memberID: nil, room: room)
        }
    }

    /// Any event of this type name ("member:media", "audio:mute:on", …), optionally in a room.
    public static func type(_ typeName: String, room: String? = nil) -> EventMatcher {
        EventMatcher(describe(typeName, ["room": room])) { event in
            event.typeName == typeName && (room == nil || event.roomID == room)
        }
    }

    private static func fits(_ event: RoomEvent, name: String?, memberID: String?, room: String?) -> Bool {
        (name == nil || event.user?.name == name) && (memberID == nil || event.memberID == memberID)
            && (room == nil || event.roomID == room)
    }

    private static func describe(_ type: String, _ fields: KeyValuePairs<String, String?>) -> String {
        let set = fields.compactMap { key, value in value.map { "\(key): \($0)" } }
        return set.isEmpty ? type : "\(type) (\(set.joined(separator: ", ")))"
    }
}

extension RoomEvent {
    /// One line for failure messages: `member:left #4 in room_x member mem_y (bob) reason dropped`.
    public var summary: String {
        var text = typeName
        if let id { text += " #\(id)" }
        text += " in \(roomID)"
        if let memberID { text += " member \(memberID)" }
        if let name = user?.name { text += " (\(name))" }
        if let reason { text += " reason \(reason)" }
        return text
    }
}

import Foundation

/// A person as the server knows them: `id` is stable, `name` is what they authenticated with.
public struct ParlorUser: Sendable, Hashable {
    public let id: String
    public let name: String

    public init(id: String, name: String) {
        self.id = id
        self.name = name
    }

    init(json: JSONValue, _ context: String) throws(ParlorError) {
        let fields = try JSONFields(json, context)
        self.init(id: try fields.string("id"), name: try fields.string("name"))
    }
}

/// POST /auth's answer: the token to connect with (the tutorial app reads `name` and `jwt`).
public struct AuthResponse: Sendable, Hashable {
    public let name: String
    public let jwt: String
    public let userID: String
    public let expiresAt: Date?
    /// The secret that gets this identity back from /auth while the name is in use (nil from servers before it).
    public let claim: String?

    init(json: JSONValue) throws(ParlorError) {
        let fields = try JSONFields(json, "auth response")
        name = try fields.string("name")
        jwt = try fields.string("jwt")
        userID = try fields.string("user_id")
        expiresAt = fields.date("expires_at")
        claim = json["claim"]?.stringValue
    }
}

/// Settings of a room: how long it stays open once empty, and how many members it admits.
public struct RoomProperties: Sendable, Hashable {
    /// Seconds an empty room stays open (the server's default is 300); nil when creating means "server default".
    public var ttl: Int?
    /// nil: no limit.
    public var maxMembers: Int?
    /// `.stage`: moderators and speakers on a stage, listeners raise hands; nil: open (the default).
    public var mode: RoomMode?
    /// End-to-end encrypted (issue 40; docs/e2ee.md): set at creation, never changed. Members join with
    /// `join(_:e2ee: true)`, exchange keys with `sendKey`, and chat with `send(ciphertext:in:)`.
    public var e2ee: Bool

    public init(ttl: Int? = nil, maxMembers: Int? = nil, mode: RoomMode? = nil, e2ee: Bool = false) {
        self.ttl = ttl
        self.maxMembers = maxMembers
        self.mode = mode
        self.e2ee = e2ee
    }

    init(json: JSONValue?) {
        ttl = json?["ttl"]?.integerValue.map { Int($0) }
        maxMembers = json?["max_members"]?.integerValue.map { Int($0) }
        // Open is the default, read back as nil: properties equal those a room was created with.
        mode = json?["mode"]?.stringValue.flatMap(RoomMode.init(rawValue:)).flatMap { $0 == .open ? nil : $0 }
        e2ee = json?["e2ee"]?.boolValue ?? false
    }

    var json: JSONValue {
        var object: [String: JSONValue] = [:]
        if let ttl { object["ttl"] = JSONValue(ttl) }
        if let maxMembers { object["max_members"] = JSONValue(maxMembers) }
        if let mode { object["mode"] = .string(mode.rawValue) }
        if e2ee { object["e2ee"] = .bool(true) }
        return .object(JSONObject(sortingKeysOf: object))
    }
}

/// A room (the tutorial's "conversation"): `id` is what `join` takes.
public struct Room: Sendable, Hashable, Identifiable {
    public let id: String
    /// Unique, URL-friendly name; the server derives one from the id when none was given.
    public let name: String
    public let displayName: String
    public let createdAt: Date?
    /// The creator's user id; nil when the room was created without a token.
    public let createdBy: String?
    /// Members joined right now.
    public let memberCount: Int
    public let properties: RoomProperties
    /// The newest event's id in the room's history (0: none yet).
    public let lastEventID: Int64
    /// Set once the room has closed (GET /rooms/{id} still finds closed rooms).
    public let closedAt: Date?
    /// A locked room takes no new members.
    public let locked: Bool
    /// `properties.mode`; open for servers before stage rooms.
    public var mode: RoomMode { properties.mode ?? .open }
    /// `properties.e2ee`; false for servers before encrypted rooms.
    public var e2ee: Bool { properties.e2ee }

    init(json: JSONValue) throws(ParlorError) {
        let fields = try JSONFields(json, "room")
        id = try fields.string("id")
        name = try fields.string("name")
        displayName = try fields.string("display_name")
        createdAt = fields.date("created_at")
        createdBy = fields["created_by"]?.stringValue
        memberCount = Int(fields["member_count"]?.integerValue ?? 0)
        properties = RoomProperties(json: fields["properties"])
        lastEventID = fields["last_event_id"]?.integerValue ?? 0
        closedAt = fields.date("closed_at")
        locked = fields["locked"]?.boolValue ?? false
    }
}

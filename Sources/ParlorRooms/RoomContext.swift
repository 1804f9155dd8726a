import ParlorProtocol

/// One command's hold on the room it changes: the room's live state and the store transaction the command writes
/// in (inside its savepoint). A command takes it with `Step.context(of:)` once the room is found and the command
/// allowed (`RoomsService.context(for:in:)` finds and takes in one), and taking it records the room as changed by
/// the batch: the observers after the commit (live users, media, gauges, the rooms version, the cluster) learn
/// which rooms changed from the contexts taken, not from a set each command must remember to fill.
struct RoomContext {
    let room: LiveRoom
    let store: any RoomTransaction
    /// What the room's rules need from the server (RoomRules.swift).
    let rules: RoomRules

    /// Stores the room's next event (the store allocates its id in this transaction) and returns it.
    func appendEvent(type: String, from: String?, body: JSONValue, at now: Int64) throws -> EventRecord {
        let event = try store.appendEvent(roomID: room.id, type: type, from: from, body: body, at: now)
        try appended(event)
        return event
    }

    /// The same, for a body already written as a JSON object's bytes (the record's tree is parsed only if asked).
    func appendEvent(type: String, from: String?, encodedBody: [UInt8], at now: Int64) throws -> EventRecord {
        let event = try store.appendEvent(roomID: room.id, type: type, from: from, encodedBody: encodedBody, at: now)
        try appended(event)
        return event
    }

    func appendMemberJoined(_ member: LiveMember, at now: Int64) throws -> EventRecord {
        try appendEvent(type: EventType.memberJoined.rawValue, from: member.id, encodedBody: member.eventBody(), at: now)
    }

    func appendMemberLeft(_ member: LiveMember, reason: LeaveReason, at now: Int64) throws -> EventRecord {
        try appendEvent(type: EventType.memberLeft.rawValue, from: member.id, encodedBody: member.eventBody(reason: reason), at: now)
    }

    static let eventsPrunedPerAppend = 4

    /// Whether the user has been in the room before (its role is kept, so a lock or an address ban lets it back in).
    func isKnown(_ userID: String) throws -> Bool {
        if room.roles[userID] != nil { return true }
        return try store.hasMembership(userID: userID, roomID: room.id)
    }

    /// The join refusal a ban or the lock gives this caller, if any.
    func checkAdmission(_ caller: Caller, at now: @autoclosure () -> Int64) throws {
        guard room.locked || !room.bans.isEmpty else { return }  // the common case costs nothing
        try room.checkAdmission(userID: caller.user.id, address: caller.client.address, known: try isKnown(caller.user.id), at: now())
    }

    /// The room's head moves to `event`, and its history keeps the newest `maxRoomEvents` (issue 34): each event
    /// past the cap deletes the oldest beyond it, in the same transaction, a few at most (so a cap lowered since the
    /// last run is caught up a little per event and the work per event stays bounded). The newest event is never
    /// deleted: SQLite's next id comes from it.
    private func appended(_ event: EventRecord) throws {
        room.lastEventID = event.id
        let cap = Int64(rules.configuration.maxRoomEvents)
        guard event.id > cap else { return }
        _ = try store.pruneEvents(roomID: room.id, through: event.id - cap, limit: Self.eventsPrunedPerAppend)
    }
}

/// The rooms a batch changed: those whose contexts its commands took, and those caught up from other nodes'
/// events. Only this file adds to it.
struct ChangedRooms {
    private var touchedRooms: Set<String> = []

    var rooms: Set<String> { touchedRooms }
    var isEmpty: Bool { touchedRooms.isEmpty }

    mutating func merge(_ other: ChangedRooms) { touchedRooms.formUnion(other.touchedRooms) }

    fileprivate mutating func insert(_ roomID: String) { touchedRooms.insert(roomID) }
}

extension Step {
    /// Stores an event about `member` (its `member_id` and `user` plus `body`), sends it to the room and the webhooks.
    @discardableResult
    mutating func appendAndBroadcast(_ type: EventType, about member: LiveMember, in room: LiveRoom, body: JSONObject,
                                     at now: Int64) throws -> EventRecord {
        var object: JSONObject = ["member_id": .string(member.id), "user": member.user.json]
        for (key, value) in body.pairs { object[key] = value }
        let event = try context(of: room).appendEvent(type: type.rawValue, from: member.id, body: .object(object), at: now)
        batch.broadcast(event, in: room)
        batch.notices.append(.roomEvent(room: room.summary, event: event))
        return event
    }

    /// The context of a room the command is about to change (checks passed); the batch counts the room as changed.
    /// Every rule of a room runs with one, so this is where a debug build checks they run on the rooms thread.
    @discardableResult
    mutating func context(of room: LiveRoom) -> RoomContext {
        rules.assertOnRoomsThread()
        batch.changed.insert(room.id)
        return RoomContext(room: room, store: store, rules: rules)
    }
}

extension Batch {
    /// A room brought up to date from what other nodes committed (or closed by them): changed, though no command
    /// of this node took its context.
    mutating func caughtUp(_ roomID: String) { changed.insert(roomID) }
}

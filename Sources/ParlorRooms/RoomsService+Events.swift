import ParlorProtocol

extension RoomsService {
    /// Stores the room's next event (the store allocates its id in this transaction) and returns it.
    func appendEvent(to room: LiveRoom, type: String, from: String?, body: JSONValue, at now: Int64,
                     _ step: inout Step) throws -> EventRecord {
        assertOnRoomsThread()
        let event = try step.store.appendEvent(roomID: room.id, type: type, from: from, body: body, at: now)
        room.lastEventID = event.id
        try pruneHistory(of: room, after: event.id, &step)
        return event
    }

    /// The same, for a body already written as a JSON object's bytes (the record's tree is parsed only if asked).
    func appendEvent(to room: LiveRoom, type: String, from: String?, encodedBody: [UInt8], at now: Int64,
                     _ step: inout Step) throws -> EventRecord {
        assertOnRoomsThread()
        let event = try step.store.appendEvent(roomID: room.id, type: type, from: from, encodedBody: encodedBody, at: now)
        room.lastEventID = event.id
        try pruneHistory(of: room, after: event.id, &step)
        return event
    }

    /// Keeps the room's newest `maxRoomEvents` (issue 34): each event past the cap deletes the oldest beyond it, in
    /// the same transaction, a few at most (so a cap lowered since the last run is caught up a little per event and
    /// the work per event stays bounded). The newest event is never deleted: SQLite's next id comes from it.
    func pruneHistory(of room: LiveRoom, after newest: Int64, _ step: inout Step) throws {
        let cap = Int64(configuration.maxRoomEvents)
        guard newest > cap else { return }
        _ = try step.store.pruneEvents(roomID: room.id, through: newest - cap, limit: Self.eventsPrunedPerAppend)
    }

    static let eventsPrunedPerAppend = 4

    func appendMemberJoined(_ member: LiveMember, to room: LiveRoom, at now: Int64, _ step: inout Step) throws -> EventRecord {
        assertOnRoomsThread()
        return try appendEvent(to: room, type: EventType.memberJoined.rawValue, from: member.id,
                               encodedBody: member.eventBody(), at: now, &step)
    }

    func appendMemberLeft(_ member: LiveMember, reason: LeaveReason, to room: LiveRoom, at now: Int64,
                          _ step: inout Step) throws -> EventRecord {
        assertOnRoomsThread()
        return try appendEvent(to: room, type: EventType.memberLeft.rawValue, from: member.id,
                               encodedBody: member.eventBody(reason: reason), at: now, &step)
    }

    /// Queues one encoding of the event to every connection attached to the room.
    func broadcast(_ event: EventRecord, in room: LiveRoom, _ step: inout Step) {
        assertOnRoomsThread()
        broadcast(ProtocolMessage.event(event), in: room, &step)
    }

    /// Queues a room event's message to every connection attached to the room (counted as delivered).
    func broadcast(_ message: [UInt8], in room: LiveRoom, _ step: inout Step) {
        assertOnRoomsThread()
        room.forEachConnection { step.batch.outbox.sendEvent(message, to: $0) }
    }
}

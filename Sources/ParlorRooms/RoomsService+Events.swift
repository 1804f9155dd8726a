import ParlorProtocol

extension RoomsService {
    /// Stores the room's next event (the store allocates its id in this transaction) and returns it.
    func appendEvent(to room: LiveRoom, type: String, from: String?, body: JSONValue, at now: Int64,
                     _ step: inout Step) throws -> EventRecord {
        loop.assertInLoop()
        let event = try step.store.appendEvent(roomID: room.id, type: type, from: from, body: body, at: now)
        room.lastEventID = event.id
        return event
    }

    /// The same, for a body already written as a JSON object's bytes (the record's tree is parsed only if asked).
    func appendEvent(to room: LiveRoom, type: String, from: String?, encodedBody: [UInt8], at now: Int64,
                     _ step: inout Step) throws -> EventRecord {
        loop.assertInLoop()
        let event = try step.store.appendEvent(roomID: room.id, type: type, from: from, encodedBody: encodedBody, at: now)
        room.lastEventID = event.id
        return event
    }

    func appendMemberJoined(_ member: LiveMember, to room: LiveRoom, at now: Int64, _ step: inout Step) throws -> EventRecord {
        loop.assertInLoop()
        return try appendEvent(to: room, type: EventType.memberJoined.rawValue, from: member.id,
                               encodedBody: member.eventBody(), at: now, &step)
    }

    func appendMemberLeft(_ member: LiveMember, reason: LeaveReason, to room: LiveRoom, at now: Int64,
                          _ step: inout Step) throws -> EventRecord {
        loop.assertInLoop()
        return try appendEvent(to: room, type: EventType.memberLeft.rawValue, from: member.id,
                               encodedBody: member.eventBody(reason: reason), at: now, &step)
    }

    /// Queues one encoding of the event to every connection attached to the room.
    func broadcast(_ event: EventRecord, in room: LiveRoom, _ step: inout Step) {
        loop.assertInLoop()
        broadcast(ProtocolFrame.event(event), in: room, &step)
    }

    /// Queues a room event's frame to every connection attached to the room (counted as delivered).
    func broadcast(_ frame: [UInt8], in room: LiveRoom, _ step: inout Step) {
        loop.assertInLoop()
        room.forEachConnection { step.batch.outbox.sendEvent(frame, to: $0) }
    }
}

import ParlorProtocol

/// A hand up or down, and the room's lock: stage changes that need only the room's context and the batch. Each is a
/// stored event; nothing is written or sent when nothing changes.
extension RoomContext {
    func setHand(of member: LiveMember, raised: Bool, by actor: LiveMember?, _ step: inout Step) throws {
        let userID = member.user.id
        guard raised != (room.hands[userID] != nil) else { return }
        let now = rules.clock.now()
        var raisedAt: Int64?
        if raised {
            raisedAt = max(now, room.lastHandRaisedAt + 1)
            room.lastHandRaisedAt = raisedAt ?? now
        }
        try store.setHand(roomID: room.id, userID: userID, raisedAt: raisedAt)
        room.setHand(raisedAt: raisedAt, of: userID)
        // Raised: the event's time is the hand's (as a join's is the member's), so a node catching it up knows it.
        try step.appendAndBroadcast(EventType.memberHand, about: member, in: room, body: ["raised": .bool(raised), "by": actor.idOrNull],
                                    at: raisedAt ?? now)
    }

    func setLocked(_ locked: Bool, by actor: LiveMember?, _ step: inout Step) throws {
        guard room.locked != locked else { return }
        try store.setLocked(roomID: room.id, locked)
        room.locked = locked
        let event = try appendEvent(type: EventType.roomLocked.rawValue, from: actor?.id, body: ["locked": .bool(locked), "by": actor.idOrNull],
                                    at: rules.clock.now())
        step.batch.broadcast(event, in: room)
        step.batch.notices.append(.roomEvent(room: room.summary, event: event))
    }
}

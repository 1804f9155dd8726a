import ParlorProtocol

/// Stage changes that need only the room (its context) and the batch: a hand up or down, the lock. `now` is read
/// only when something changes.
extension Step {
    mutating func setHand(of member: LiveMember, raised: Bool, by actor: LiveMember?, in room: LiveRoom,
                          at clock: @autoclosure () -> Int64) throws {
        let userID = member.user.id
        guard raised != (room.hands[userID] != nil) else { return }
        let now = clock()
        var raisedAt: Int64?
        if raised {
            raisedAt = max(now, room.lastHandRaisedAt + 1)
            room.lastHandRaisedAt = raisedAt ?? now
        }
        try context(of: room).store.setHand(roomID: room.id, userID: userID, raisedAt: raisedAt)
        room.setHand(raisedAt: raisedAt, of: userID)
        // Raised: the event's time is the hand's (as a join's is the member's), so a node catching it up knows it.
        try appendAndBroadcast(EventType.memberHand, about: member, in: room, body: ["raised": .bool(raised), "by": actor.idOrNull],
                               at: raisedAt ?? now)
    }

    mutating func setLocked(_ locked: Bool, by actor: LiveMember?, in room: LiveRoom, at clock: @autoclosure () -> Int64) throws {
        guard room.locked != locked else { return }
        let context = context(of: room)
        try context.store.setLocked(roomID: room.id, locked)
        room.locked = locked
        let event = try context.appendEvent(type: EventType.roomLocked.rawValue, from: actor?.id,
                                            body: ["locked": .bool(locked), "by": actor.idOrNull], at: clock())
        batch.broadcast(event, in: room)
        batch.notices.append(.roomEvent(room: room.summary, event: event))
    }
}

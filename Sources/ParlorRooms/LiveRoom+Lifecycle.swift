import ParlorProtocol

/// Closing a room: by request (every membership ends with reason room_closed), or once it has been empty for its
/// ttl. A closed room leaves the live rooms; its history stays readable.
extension LiveRoom {
    /// Ends every membership with reason room_closed, then closes the room (its creator or an admin only).
    func close(by requester: Requester, _ step: inout Step) throws {
        switch requester {
        case .admin: break
        case .user(let user):
            guard let user, user.id == createdBy else {
                throw RoomError(.roomForbidden, "only the room's creator or an admin can close it")
            }
        }
        let context = step.context(of: self)
        if recording != nil { try context.stopRecording(by: nil, reason: RecordingEndReason.roomClosed, &step) }
        for member in sortedMembers {
            try context.end(member, reason: .roomClosed, &step)
        }
        let rules = step.rules
        if let timer = ttlTimer { rules.timers.cancel(timer) }
        try context.store.closeRoom(id: id, at: rules.clock.now())
        rules.state.rooms[id] = nil
        step.batch.notices.append(.roomFinished(room: summary, reason: "closed"))
        rules.logger.info("room closed", ["room": id, "reason": "closed by request"])
    }

    /// The ttl timer fired: closes the room if it is still empty and its ttl has passed, else arms the timer again.
    func closeIfExpired(_ step: inout Step) throws {
        guard memberCount == 0, let emptySince else { return }
        let rules = step.rules
        let now = rules.clock.now()
        guard now >= emptySince + ttl * 1000 else {
            rules.timers.scheduleExpiry(of: self)
            return
        }
        try step.store.closeRoom(id: id, at: now)
        rules.state.rooms[id] = nil
        ttlTimer = nil
        step.context(of: self)
        step.batch.notices.append(.roomFinished(room: summary, reason: "ttl"))
        rules.logger.info("room closed", ["room": id, "reason": "ttl"])
    }
}

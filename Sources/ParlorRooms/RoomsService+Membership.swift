import ParlorProtocol

extension RoomsService {
    /// The open room `cid`, or the error that says why it cannot be used.
    func openRoom(_ cid: String, _ step: inout Step) throws -> LiveRoom {
        assertOnRoomsThread()
        if let room = state.rooms[cid] { return room }
        if let stored = try step.store.room(id: cid), stored.closedAt != nil { throw RoomError.closed(cid) }
        throw RoomError.notFound(cid)
    }

    /// The context of the open room `cid`, for a command that changes it (RoomContext.swift).
    func context(for cid: String, in step: inout Step) throws -> RoomContext {
        step.context(of: try openRoom(cid, &step))
    }

    func join(_ cid: String, for caller: Caller, _ step: inout Step) throws {
        assertOnRoomsThread()
        let context = try context(for: cid, in: &step)
        let room = context.room
        if let existing = room.member(forUser: caller.user.id) {
            // Idempotent: the same member back, no second member:joined. A member waiting out its grace period is back.
            if existing.disconnectedAt != nil { try markPresent(existing.id, in: room, &step) }
            try attach(caller.client, to: room, member: existing.id, &step)
            step.batch.reply(to: caller, .conversationJoin, encodedBody: room.joinReply(memberID: existing.id))
            return
        }
        try context.checkAdmission(caller, at: clock.now())
        let cap = min(room.maxMembers ?? Int64.max, Int64(configuration.maxMembersPerRoom))
        if room.memberCount >= Int(cap) { throw RoomError.full(cid, cap) }
        try rules.addressLimits.checkMembers(from: caller.client.address, in: room)
        state.recentAddresses.record(caller.client.address, for: caller.user.id, at: clock.now())

        let now = max(clock.now(), room.lastJoinedAt + 1)
        room.lastJoinedAt = now
        var member = LiveMember(id: Identifier.makeTimeOrdered(Identifier.member, milliseconds: now), user: caller.user,
                                joinedAt: now)
        member.address = caller.client.address
        try context.store.addMember(id: member.id, roomID: cid, userID: caller.user.id, joinedAt: now)
        let event = try context.appendMemberJoined(member, at: now)
        if room.emptySince != nil { try step.store.setRoomEmpty(id: cid, since: nil) }
        if let timer = room.admit(member) { clock.cancel(timer) }
        try assignInitialRole(caller.user, in: room, &step)
        try attach(caller.client, to: room, member: member.id, &step)
        step.batch.reply(to: caller, .conversationJoin, encodedBody: room.joinReply(memberID: member.id))
        step.batch.broadcast(event, in: room)
        step.batch.notices.append(.memberJoined(room: room.summary, member: member.summary, eventID: event.id))
    }

    func leave(_ cid: String, for caller: Caller, _ step: inout Step) throws {
        assertOnRoomsThread()
        let room = try openRoom(cid, &step)
        guard let member = room.member(forUser: caller.user.id) else { throw RoomError.notJoined(cid) }
        step.context(of: room)
        step.batch.reply(to: caller, .conversationLeave, body: .object([:]))
        try end(member, in: room, reason: .left, &step)
    }

    /// Ends a membership: LEFT in the store, member:left to everyone attached (the member's own connections
    /// included), then those connections stop receiving the room.
    func end(_ member: LiveMember, in room: LiveRoom, reason: LeaveReason, _ step: inout Step) throws {
        assertOnRoomsThread()
        let now = clock.now()
        try step.store.endMembership(memberID: member.id, reason: reason, at: now)
        let event = try step.context(of: room).appendMemberLeft(member, reason: reason, at: now)
        let becameEmpty = room.memberCount == 1
        if becameEmpty { try step.store.setRoomEmpty(id: room.id, since: now) }

        step.batch.broadcast(event, in: room)
        step.batch.notices.append(.memberLeft(room: room.summary, member: member.summary, reason: reason, eventID: event.id))
        // A member who leaves leaves the queue of hands (member:left says so); a room without moderators gets one.
        if dismiss(member, from: room, at: now) {
            try step.store.setHand(roomID: room.id, userID: member.user.id, raisedAt: nil)
        }
        if reason != .roomClosed { try promoteSuccessorIfNeeded(after: member, in: room, &step) }
    }

    /// What an ended membership changes in the live room, here or (caught up from its member:left) on another node:
    /// its connections here stop receiving the room, its hand goes down (returns whether it was up), and an empty
    /// room's ttl starts at `now`.
    @discardableResult
    func dismiss(_ member: LiveMember, from room: LiveRoom, at now: Int64) -> Bool {
        assertOnRoomsThread()
        if let timer = member.dropTimer { clock.cancel(timer) }
        let (detached, handWasUp) = room.dismiss(member, at: now)
        for clientID in detached { state.clients[clientID]?.rooms.remove(room.id) }
        if room.memberCount == 0 { scheduleExpiry(of: room) }
        return handWasUp
    }

    func attach(_ client: ClientRef, to room: LiveRoom) {
        assertOnRoomsThread()
        room.attach(client.id, user: client.user.id)
        state.clients[client.id, default: ClientState(ref: client)].rooms.insert(room.id)
    }
}

import ParlorProtocol

/// Membership: joining, leaving, and a member's presence (its grace period while no connection of its user is
/// attached). Every change is a stored event, broadcast once the batch commits.
extension RoomContext {
    /// conversation:join. Idempotent: the same member back, no second member:joined (a member waiting out its grace
    /// period is back). A new member passes the ban, the lock and the caps first.
    /// `statesEncryption`: the request's `"e2ee": true`, which an encrypted room requires (LiveRoom+Encryption.swift).
    func join(_ caller: Caller, statesEncryption: Bool, _ step: inout Step) throws {
        try room.requireEncryptionStatement(statesEncryption, for: .conversationJoin)
        let clock = rules.clock
        if let existing = room.member(forUser: caller.user.id) {
            if existing.disconnectedAt != nil { try markPresent(existing.id) }
            try rules.attachments.attach(caller.client, to: room, member: existing.id, &step)
            step.batch.reply(to: caller, .conversationJoin, encodedBody: room.joinReply(memberID: existing.id))
            return
        }
        try checkAdmission(caller, at: clock.now())
        // A stage room's audience may grow past an open room's cap (issue 37): its presence summarises it.
        let serverCap = room.mode == .stage ? rules.configuration.maxAudience : rules.configuration.maxMembersPerRoom
        let cap = min(room.maxMembers ?? Int64.max, Int64(serverCap))
        if room.memberCount >= Int(cap) { throw RoomError.full(room.id, cap) }
        try rules.addressLimits.checkMembers(from: caller.client.address, in: room)
        rules.state.recentAddresses.record(caller.client.address, for: caller.user.id, at: clock.now())

        let now = max(clock.now(), room.lastJoinedAt + 1)
        room.lastJoinedAt = now
        var member = LiveMember(id: Identifier.makeTimeOrdered(Identifier.member, milliseconds: now), user: caller.user,
                                joinedAt: now)
        member.address = caller.client.address
        try store.addMember(id: member.id, roomID: room.id, userID: caller.user.id, joinedAt: now)
        let event = try appendMemberJoined(member, at: now)
        if room.emptySince != nil { try store.setRoomEmpty(id: room.id, since: nil) }
        if let timer = room.admit(member) { rules.timers.cancel(timer) }
        try assignInitialRole(caller.user)
        try rules.attachments.attach(caller.client, to: room, member: member.id, &step)
        step.batch.reply(to: caller, .conversationJoin, encodedBody: room.joinReply(memberID: member.id))
        deliverPresence(event, of: member, joined: true, individually: !room.isAudience(caller.user.id), &step.batch)
        step.batch.notices.append(.memberJoined(room: room.summary, member: member.summary, eventID: event.id))
    }

    /// Ends a membership: LEFT in the store, member:left to everyone attached (the member's own connections
    /// included), then those connections stop receiving the room; a room left without moderators gets one.
    func end(_ member: LiveMember, reason: LeaveReason, _ step: inout Step) throws {
        let now = rules.clock.now()
        try store.endMembership(memberID: member.id, reason: reason, at: now)
        let event = try appendMemberLeft(member, reason: reason, at: now)
        let becameEmpty = room.memberCount == 1
        if becameEmpty { try store.setRoomEmpty(id: room.id, since: now) }

        deliverPresence(event, of: member, joined: false, individually: !room.isAudience(member.user.id), &step.batch,
                        updatingMode: false)
        step.batch.notices.append(.memberLeft(room: room.summary, member: member.summary, reason: reason, eventID: event.id))
        // A member who leaves leaves the queue of hands (member:left says so).
        if rules.state.dismiss(member, from: room, at: now, timers: rules.timers) {
            try store.setHand(roomID: room.id, userID: member.user.id, raisedAt: nil)
        }
        // Nobody left to record: the recording stops (a closing room stopped it first).
        if becameEmpty, room.recording != nil { try stopRecording(by: nil, reason: RecordingEndReason.roomEmpty, &step) }
        guard reason != .roomClosed else { return }
        room.updatePresenceMode(&step.batch.outbox, rules: rules)
        try promoteSuccessorIfNeeded(after: member, &step)
    }

    /// Clears a member's grace period: one of the user's connections is attached again.
    func markPresent(_ memberID: String) throws {
        try store.setDisconnected(memberID: memberID, since: nil)
        if let timer = room.member(memberID)?.dropTimer { rules.timers.cancel(timer) }
        room.update(memberID) {
            $0.disconnectedAt = nil
            $0.dropTimer = nil
        }
    }
}

/// Membership commands that change the room only once their checks pass (so they take its context then).
extension LiveRoom {
    /// conversation:leave: the reply, then the membership ends.
    func leave(_ caller: Caller, _ step: inout Step) throws {
        guard let member = member(forUser: caller.user.id) else { throw RoomError.notJoined(id) }
        let context = step.context(of: self)
        step.batch.reply(to: caller, .conversationLeave, body: .object([:]))
        try context.end(member, reason: .left, &step)
    }

    /// The member's grace period ended: it drops unless a connection of its user came back (here or, with several
    /// nodes, on another node).
    func dropIfStillAway(_ memberID: String, _ step: inout Step) throws {
        guard var member = member(memberID), member.disconnectedAt != nil, connections(of: member.user.id).isEmpty,
              try step.rules.attachments.allowDrop(memberID, step.store) else { return }
        member.dropTimer = nil
        try step.context(of: self).end(member, reason: .dropped, &step)
    }
}

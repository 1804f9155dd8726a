import ParlorProtocol

/// Stage rooms: roles, raised hands and moderation (mute-all, lock, ban). Chat and reactions are in
/// RoomContext+Chat.swift, hands and the lock in RoomContext+Hands.swift. Every change is a stored room event; `by` names
/// the moderator (null: an admin, the room's creator over REST, or the server itself).
extension RoomContext {
    /// Applies `action` by `actor` (nil: not a member) from client address `address` and returns the reply's body;
    /// events are broadcast as they happen.
    func act(_ action: StageAction, by actor: LiveMember?, from address: String?, _ step: inout Step) throws -> JSONValue {
        switch action {
        case .raiseHand:
            guard let actor else { throw RoomError(.requestInvalidField, "only a member raises its own hand") }
            try setHand(of: actor, raised: true, by: actor, &step)
        case .lowerHand(let memberID):
            let target = try memberID.map { try room.joinedMember($0) } ?? actor
            guard let target else { throw RoomError(.requestMissingField, "member_id is required") }
            try setHand(of: target, raised: false, by: actor, &step)
        case .setRole(let memberID, let role):
            try setRole(of: try room.joinedMember(memberID), to: role, by: actor, &step)
        case .ban(let userID, let seconds):
            return try ban(userID, seconds: seconds, by: actor, &step)
        case .muteAll:
            return ["muted": JSONValue(try muteAll(by: actor, &step))]
        case .lock(let locked):
            try setLocked(locked, by: actor, &step)
        case .message(let content):
            guard let actor else { throw RoomError(.requestInvalidField, "only a member sends chat messages") }
            try room.checkChatContent(content)
            return ["id": JSONValue(try sendMessage(content, from: actor, address: address, &step))]
        case .reaction(let emoji):
            guard let actor else { throw RoomError(.requestInvalidField, "only a member sends reactions") }
            try sendReaction(emoji, from: actor, address: address, &step)
        }
        return .object([:])
    }

    /// The role a user gets the first time it joins (then kept for the room's life), stored. An open room's
    /// speakers need no row (a user without one is a speaker), which keeps a join one statement shorter.
    func assignInitialRole(_ user: User) throws {
        guard let (role, stored) = room.initialRole(of: user) else { return }
        if stored { try store.setRole(roomID: room.id, userID: user.id, role) }
        room.setRole(role, of: user.id)
    }

    func setRole(of member: LiveMember, to role: MemberRole, by actor: LiveMember?, _ step: inout Step) throws {
        let userID = member.user.id
        let current = room.role(of: userID)
        guard current != role else { return }
        let maxAudioSenders = rules.configuration.maxAudioSenders
        if room.mode == .stage, role.maySpeak, !current.maySpeak, room.stageSpeakerCount >= maxAudioSenders {
            throw RoomError(.mediaTooManySenders, "room \(room.id) already has \(maxAudioSenders) speakers; demote one first")
        }
        let clock = rules.clock
        if role.maySpeak, room.hands[userID] != nil { try setHand(of: member, raised: false, by: actor, &step) }
        try store.setRole(roomID: room.id, userID: userID, role)
        room.setRole(role, of: userID)
        try step.appendAndBroadcast(EventType.memberRole, about: member, in: room, body: ["role": .string(role.rawValue), "by": actor.idOrNull],
                                    at: clock.now())
        // Demoted: its audio stops at once, so the other clients stop playing it (the forwarding unit will enforce it).
        if !role.maySpeak, let current = room.member(member.id), current.audioEnabled,
           let message = try step.applyMedia(.disable, to: current, in: room) {
            step.batch.broadcast(message, in: room)
        }
    }

    /// After a moderator's membership ended: if no moderator is left, the longest-present speaker becomes one.
    func promoteSuccessorIfNeeded(after left: LiveMember, _ step: inout Step) throws {
        guard room.role(of: left.user.id) == .moderator, !room.hasModerator,
              let successor = room.sortedMembers.first(where: { room.role(of: $0.user.id) == .speaker }) else { return }
        try setRole(of: successor, to: .moderator, by: nil, &step)
    }

    /// Mutes every member other than the moderator who sends audio unmuted; returns how many.
    private func muteAll(by actor: LiveMember?, _ step: inout Step) throws -> Int {
        var muted = 0
        for member in room.sortedMembers where member.id != actor?.id && member.audioEnabled && !member.audioMuted {
            if let message = try step.applyMedia(.mute(true), to: member, in: room, by: actor.idOrNull) {
                step.batch.broadcast(message, in: room)
                muted += 1
            }
        }
        return muted
    }

    /// Bans a user (and, for users the room has not seen, the client addresses it had lately) and ends its membership.
    private func ban(_ userID: String, seconds: Int64, by actor: LiveMember?, _ step: inout Step) throws -> JSONValue {
        guard StageRules.banSeconds.contains(seconds) else {
            throw RoomError(.requestInvalidField, "seconds must be a whole number from 1 to \(StageRules.banSeconds.upperBound)")
        }
        guard userID != actor?.user.id else { throw RoomError(.requestInvalidField, "user_id must not be your own") }
        let member = room.member(forUser: userID)
        guard try member != nil || isKnown(userID) else {
            throw RoomError(.memberNotFound, "user \(userID) has never been a member of room \(room.id)")
        }
        let now = rules.clock.now()
        let until = now + seconds * 1000
        // The addresses of its connections here, and those it connected from lately (it may have left already).
        let state = rules.state
        var addresses = room.connections(of: userID).compactMap { state.clients[$0]?.ref.address }
        for address in state.recentAddresses.addresses(of: userID, at: now) where !addresses.contains(address) { addresses.append(address) }
        let ban = RoomBan(userID: userID, clientAddresses: Array(addresses.prefix(RecentAddresses.maxPerUser * 2)), until: until)
        try store.ban(ban, roomID: room.id)
        room.bans[userID] = ban
        if let member { try end(member, reason: .kicked, &step) }
        return ["until": .string(Timestamp.iso8601(milliseconds: until))]
    }
}

/// Stage requests check who asks before they take the room's context.
extension LiveRoom {
    /// A stage request from a member: its membership and role are checked, the action's events go out, then the reply.
    func serveStage(_ request: StageAction, for caller: Caller, _ step: inout Step) throws {
        guard let member = member(forUser: caller.user.id) else { throw RoomError.notJoined(id) }
        var action = request
        // Naming oneself is lowering one's own hand, which needs no moderator.
        if case .lowerHand(let memberID?) = action, memberID == member.id { action = .lowerHand(memberID: nil) }
        if action.needsModerator, role(of: member.user.id) != .moderator {
            throw RoomError(.memberNotAllowed, "only a moderator of room \(id) may do that")
        }
        let body = try step.context(of: self).act(action, by: member, from: caller.client.address, &step)
        step.batch.reply(to: caller, action.requestType, body: body)
    }

    /// A moderator action over REST: an admin, or the room's creator.
    func moderate(_ action: StageAction, by requester: Requester, _ step: inout Step) throws -> JSONValue {
        if case .user(let user) = requester, user == nil || user?.id != createdBy {
            throw RoomError(.roomForbidden, "only the room's creator or an admin can moderate it over HTTP")
        }
        return try step.context(of: self).act(action, by: nil, from: nil, &step)
    }
}

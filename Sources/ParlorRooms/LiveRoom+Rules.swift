import ParlorProtocol

/// The room's own rules: who may join and as what, who is a joined member, what a join reply says, and the rates
/// per client address. They read and change this room only; storing and sending are the command's (RoomContext).
extension LiveRoom {
    /// Adds a joining member (here, or caught up from its member:joined on another node): the room is no longer
    /// empty. Returns the room's expiry timer, now stopped, for the caller to cancel.
    func admit(_ member: LiveMember) -> RoomsTimer? {
        lastJoinedAt = max(lastJoinedAt, member.joinedAt)
        add(member)
        emptySince = nil
        defer { ttlTimer = nil }
        return ttlTimer
    }

    /// Removes an ended member (here, or caught up from its member:left): its connections stop receiving the room,
    /// its hand goes down, and an emptied room is empty since `now`. Returns the connections detached and whether
    /// the hand was up.
    func dismiss(_ member: LiveMember, at now: Int64) -> (detached: Set<ClientID>, handWasUp: Bool) {
        remove(member.id)
        let detached = detachAll(user: member.user.id)
        let handWasUp = setHand(raisedAt: nil, of: member.user.id) != nil
        if memberCount == 0 { emptySince = now }
        return (detached, handWasUp)
    }

    /// The joined member `memberID`, or the error a request naming another gets.
    func joinedMember(_ memberID: String) throws -> LiveMember {
        guard let member = member(memberID) else {
            throw RoomError(.memberNotFound, "\(memberID) is not a joined member of room \(id)")
        }
        return member
    }

    /// The role a joining user gets (nil: it has one already) and whether it is stored: a node catching up a
    /// member:joined sets it only when stored, as reading the room back would.
    func initialRole(of user: User) -> (role: MemberRole, stored: Bool)? {
        guard roles[user.id] == nil else { return nil }
        let role = StageRules.initialRole(mode: mode, isCreator: user.id == createdBy, roomHasCreator: createdBy != nil,
                                          roomHasRoles: !roles.isEmpty)
        return (role, mode == .stage || role != .speaker)
    }

    /// Refuses a joining user a ban or the lock keeps out (`known`: it has been a member here before), and forgets
    /// bans that have ended.
    func checkAdmission(userID: String, address: String?, known: Bool, at now: Int64) throws {
        if let ban = StageRules.refusingBan(userID: userID, address: address, knownToRoom: known, bans: bans.values, at: now) {
            throw RoomError(.roomBanned, "you are banned from room \(id) until \(Timestamp.iso8601(milliseconds: ban.until))")
        }
        bans = bans.filter { $0.value.until > now }
        if locked, !known, userID != createdBy {
            throw RoomError(.roomLocked, "room \(id) is locked: it takes no new members")
        }
    }

    /// The join reply's body, its O(n) member list spliced from each member's cached bytes.
    /// In summary mode (issue 37) the list is the stage, the raised hands, the joiner and the first page of the audience, with
    /// `audience_count` and, when more listeners follow, `audience_cursor` for conversation:members (role listener).
    func joinReply(memberID: String) -> [UInt8] {
        let summary = presence.mode == .summary ? summaryMemberList(audiencePage: Self.audiencePageSize, including: memberID) : nil
        let members = summary?.members ?? encodedMemberList()
        var reply = JSONObjectWriter(reservingCapacity: members.count + 256)
        reply.field("member_id", string: memberID)
        reply.field("cid", string: id)
        reply.field("members", encoded: members)
        reply.field("last_event_id", integer: lastEventID)
        reply.field("mode", string: mode.rawValue)
        reply.field("locked", .bool(locked))
        // Only encrypted rooms say so (issue 40): the others keep the tutorial's reply byte for byte.
        if e2ee { reply.field("e2ee", .bool(true)) }
        reply.field("role", string: member(memberID).map { role(of: $0.user.id) }?.rawValue ?? MemberRole.speaker.rawValue)
        // Open rooms keep the tutorial's reply byte for byte.
        if mode == .stage { reply.field("presence", string: presence.mode.rawValue) }
        // Whether it is being recorded (issue 38); open rooms only say so while they are.
        if mode == .stage || recording != nil { reply.field("recording", recording?.json ?? .null) }
        // Its live stream (issue 38); open rooms only say so while it is public or heard.
        if mode == .stage || stream.isPublic || stream.listeners > 0 { reply.field("stream", stream.json) }
        if let summary {
            reply.field("audience_count", integer: Int64(summary.audienceCount))
            if let cursor = summary.cursor { reply.field("audience_cursor", string: cursor.encoded) }
        }
        return reply.finish()
    }

    /// Listeners a summary-mode join reply lists: a screenful of faces (the web client shows 24 at a time); the rest
    /// page through conversation:members with role listener. Every join into a big room carries them, so few: at
    /// 500 joins a second, 100 of them made the replies about a tenth of the server's CPU (bench/README.md).
    static let audiencePageSize = 24

    /// Joined members who joined from client address `address`, which the per-address member cap counts.
    func memberCount(fromAddress address: String) -> Int {
        members.values.lazy.filter { $0.address == address }.count
    }

    /// Counts a message or reaction (`window`) from client address `address`; false when the address is at its rate
    /// (`perSecond`: the messages and the reactions an address may send a second).
    func admit(_ address: String, at now: Int64, _ window: WritableKeyPath<AddressRates, RateWindow>,
               perSecond: (messages: Int, reactions: Int)) -> Bool {
        // Addresses that went quiet are forgotten once there are more than the members could need, so the table
        // stays about as large as the room.
        if addressRates.count > memberCount + 64 {
            addressRates = addressRates.filter { !$0.value.messages.isIdle(at: now) || !$0.value.reactions.isIdle(at: now) }
        }
        var rates = addressRates[address] ?? AddressRates(
            messages: RateWindow(.init(count: perSecond.messages, milliseconds: 1_000)),
            reactions: RateWindow(.init(count: perSecond.reactions, milliseconds: 1_000)))
        let admitted = rates[keyPath: window].admit(at: now)
        addressRates[address] = rates
        return admitted
    }
}

extension LiveMember? {
    /// An event's `by`: the acting member's id, or null (an admin, the room's creator over REST, the server).
    var idOrNull: JSONValue { map { .string($0.id) } ?? .null }
}

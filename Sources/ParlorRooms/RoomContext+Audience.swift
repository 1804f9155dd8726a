import ParlorProtocol

/// Presence by role in big stage rooms (issue 37; docs/protocol.md, "Presence in big stage rooms"). A stage room
/// above `--full-presence-limit` joined members announces its listeners' joins and leaves in full only to its
/// moderators (and the member's own connections); everyone else gets them as one coalesced `room:audience` per
/// `--audience-update-interval`. The stage and raised hands are announced to everyone as always. Every join and
/// leave is still stored. Each node decides for its own connections, from its own copy of the room.
extension LiveRoom {
    /// Whether a user's joins and leaves go to the audience digest in summary mode: a listener without a raised hand.
    func isAudience(_ userID: String) -> Bool { roles[userID] == .listener && hands[userID] == nil }

    /// Joined listeners (raised hands included): the `audience_count` of a join reply and the `count` of room:audience.
    var audienceCount: Int {
        memberCount - stageUsers.reduce(0) { $0 + (memberIDByUser[$1] == nil ? 0 : 1) }
    }

    /// The connections of the room's joined moderators, which get every listener's join and leave in full.
    var moderatorConnections: Set<ClientID> {
        var clientIDs: Set<ClientID> = []
        for userID in stageUsers where roles[userID] == .moderator { clientIDs.formUnion(connections(of: userID)) }
        return clientIDs
    }

    /// Queues a stored member:joined or member:left (`message`, encoded) of `member` for the connections in
    /// `receivers` (nil: every connection receiving the room): all of them, unless the room is in summary mode and
    /// the member is audience (`individually` false), when only moderators and the member's own connections get
    /// it and the rest get it in the next room:audience.
    func deliverPresence(_ message: [UInt8], of member: (id: String, userID: String, user: User), joined: Bool, individually: Bool,
                         to receivers: [ClientID]? = nil, _ outbox: inout Outbox, rules: RoomRules) {
        guard presence.mode == .summary, !individually else {
            if let receivers { for clientID in receivers { outbox.sendEvent(message, to: clientID) } } else {
                forEachConnection { outbox.sendEvent(message, to: $0) }
            }
            return
        }
        var direct = moderatorConnections
        direct.formUnion(connections(of: member.userID))
        if let receivers {
            for clientID in receivers where direct.contains(clientID) { outbox.sendEvent(message, to: clientID) }
        } else {
            for clientID in direct { outbox.sendEvent(message, to: clientID) }
        }
        if joined { presence.digest.addJoin(member.id, user: member.user) } else { presence.digest.addLeave(member.id) }
        if presence.timer == nil { rules.timers.scheduleAudienceUpdate(of: self, after: rules.configuration.audienceUpdateInterval) }
    }

    /// An event another node stored, for this node's `receivers` (ClusterSync): joins and leaves by the presence
    /// mode, as the node that stored them delivers them to its own connections.
    func deliverCaughtUp(_ event: EventRecord, to receivers: [ClientID], _ outbox: inout Outbox, rules: RoomRules) {
        let message = ProtocolMessage.event(event)
        let joined = event.type == EventType.memberJoined.rawValue
        guard presence.mode == .summary, joined || event.type == EventType.memberLeft.rawValue,
              let memberID = event.body["member_id"]?.stringValue, let userID = event.body["user"]?["id"]?.stringValue,
              let name = event.body["user"]?["name"]?.stringValue else {
            for clientID in receivers { outbox.sendEvent(message, to: clientID) }
            return
        }
        // A leaver's hand is down by now (the leave was applied): its leave counts as a listener's.
        deliverPresence(message, of: (memberID, userID, User(id: userID, name: name)), joined: joined,
                        individually: !isAudience(userID), to: receivers, &outbox, rules: rules)
    }

    /// Sends the pending room:audience to every connection but the moderators' (they had each change in full).
    func sendAudience(_ outbox: inout Outbox, rules: RoomRules) {
        presence.timer = nil
        guard !presence.digest.isEmpty else { return }
        let body = presence.digest.take(count: audienceCount, lastEventID: lastEventID)
        let message = unstoredEvent(.roomAudience, body, at: rules.clock.now())
        let moderators = moderatorConnections
        var receivers = 0
        forEachConnection {
            guard !moderators.contains($0) else { return }
            outbox.sendEvent(message, to: $0)
            receivers += 1
        }
        rules.metrics.audienceUpdatesDelivered.add(receivers)
    }

    /// After the room's membership changed: switches a stage room to summary above the limit and back to full below
    /// 90 % of it, telling everyone with room:presence (what the digest holds goes out first, so a client's list is
    /// whole when it is told the room is back in full).
    func updatePresenceMode(_ outbox: inout Outbox, rules: RoomRules) {
        guard mode == .stage else { return }
        let next = PresenceMode.next(from: presence.mode, count: memberCount, limit: rules.configuration.fullPresenceLimit)
        guard next != presence.mode else { return }
        if next == .full {
            if let timer = presence.timer { rules.timers.cancel(timer) }
            sendAudience(&outbox, rules: rules)
        }
        presence.mode = next
        let body: JSONObject = ["mode": .string(next.rawValue), "count": JSONValue(Int64(memberCount)), "last_event_id": JSONValue(lastEventID)]
        let message = unstoredEvent(.roomPresence, body, at: rules.clock.now())
        forEachConnection { outbox.sendEvent(message, to: $0) }
    }

    /// An event of the room that is not stored (no `id`), as speaking events are.
    func unstoredEvent(_ type: EventType, _ body: JSONObject, at now: Int64) -> [UInt8] {
        ProtocolMessage.event(type, ["cid": .string(id), "timestamp": .string(Timestamp.iso8601(milliseconds: now)), "body": .object(body)])
    }
}

extension RoomContext {
    /// A member:joined or member:left stored by this node's command, delivered by the room's presence mode, then the
    /// mode brought up to date. `individually`: the member is on the stage or has its hand up (read before a leave
    /// lowers it).
    func deliverPresence(_ event: EventRecord, of member: LiveMember, joined: Bool, individually: Bool, _ batch: inout Batch,
                         updatingMode: Bool = true) {
        room.deliverPresence(ProtocolMessage.event(event), of: (member.id, member.user.id, member.user), joined: joined,
                             individually: individually, &batch.outbox, rules: rules)
        if updatingMode { room.updatePresenceMode(&batch.outbox, rules: rules) }
    }
}

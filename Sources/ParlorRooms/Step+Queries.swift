import ParlorProtocol

/// Reading a room (conversation:members, conversation:events) and watching it (conversation:watch, unwatch): no
/// member changes, so no room context is taken. Who may read or watch follows room visibility.
extension Step {
    mutating func replyMembers(_ cid: String, query: MembersQuery, for caller: Caller) throws {
        try requireRoomExists(cid)
        try requireVisible(cid, to: caller.user)
        let memberState: MemberState? = query.allStates ? nil : (query.state ?? .joined)
        let page: Page<MemberRecord>
        if let role = query.role {
            // Joined members by role come from the live room (a closed room has none), in join order.
            page = rules.state.rooms[cid]?.joinedMembers(role: role, after: query.cursor, pageSize: query.pageSize)
                ?? Page(items: [], pageSize: query.pageSize) { _ in PageCursor(number: 0, id: "") }
        } else if query.handsRaised {
            page = try store.raisedHands(roomID: cid, pageSize: query.pageSize, cursor: query.cursor)
        } else {
            page = try store.members(roomID: cid, state: memberState, descending: query.descending, pageSize: query.pageSize, cursor: query.cursor)
        }
        var body: JSONObject = ["cid": .string(cid), "members": .array(page.items.map(\.json))]
        if let next = page.next { body["cursor"] = .string(next.encoded) }
        batch.reply(to: caller, .conversationMembers, body: .object(body))
    }

    mutating func replyEvents(_ cid: String, since: Int64, pageSize: Int, for caller: Caller) throws {
        try requireRoomExists(cid)
        try requireVisible(cid, to: caller.user)
        let page = try store.events(roomID: cid, since: since, pageSize: pageSize)
        var body: JSONObject = ["cid": .string(cid), "events": .array(page.items.map(\.json))]
        if let next = page.next { body["cursor"] = .string(String(next.number)) }
        batch.reply(to: caller, .conversationEvents, body: .object(body))
    }

    /// conversation:watch: the connection receives the room's events from now on without joining (no member, no
    /// member:joined). The reply's `last_event_id` is where the live stream starts: events up to it come from
    /// conversation:events, so a watcher sees every id exactly once.
    mutating func watch(_ cid: String, for caller: Caller) throws {
        let room = try openRoom(cid)
        try requireVisible(cid, to: caller.user)
        room.watch(caller.client.id)
        rules.state.clients[caller.client.id]?.watching.insert(cid)
        batch.reply(to: caller, .conversationWatch, body: ["cid": .string(cid), "last_event_id": JSONValue(room.lastEventID)])
    }

    /// conversation:unwatch: stops what conversation:watch started; unwatching a room not watched is not an error.
    mutating func unwatch(_ cid: String, for caller: Caller) {
        let state = rules.state
        state.rooms[cid]?.unwatch(caller.client.id)
        state.clients[caller.client.id]?.watching.remove(cid)
        batch.reply(to: caller, .conversationUnwatch, body: ["cid": .string(cid)])
    }

    /// With members-only visibility, only a current or former member may read the room's members and history.
    private func requireVisible(_ cid: String, to user: User) throws {
        guard rules.configuration.visibility == .members, rules.state.rooms[cid]?.member(forUser: user.id) == nil else { return }
        guard try store.hasMembership(userID: user.id, roomID: cid) else { throw RoomError.notJoined(cid) }
    }

    /// Open or closed, the room must exist (history stays readable after a room closes).
    private func requireRoomExists(_ cid: String) throws {
        if rules.state.rooms[cid] != nil { return }
        guard try store.room(id: cid) != nil else { throw RoomError.notFound(cid) }
    }
}

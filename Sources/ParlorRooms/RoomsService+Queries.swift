import ParlorProtocol

extension RoomsService {
    func listMembers(_ cid: String, query: MembersQuery, for caller: Caller, _ step: inout Step) throws {
        assertOnRoomsThread()
        try requireRoomExists(cid, &step)
        try requireVisible(cid, to: caller.user, &step)
        let memberState: MemberState? = query.allStates ? nil : (query.state ?? .joined)
        let page = query.handsRaised
            ? try step.store.raisedHands(roomID: cid, pageSize: query.pageSize, cursor: query.cursor)
            : try step.store.members(roomID: cid, state: memberState, descending: query.descending,
                                     pageSize: query.pageSize, cursor: query.cursor)
        var body: JSONObject = ["cid": .string(cid), "members": .array(page.items.map(\.json))]
        if let next = page.next { body["cursor"] = .string(next.encoded) }
        step.batch.reply(to: caller, .conversationMembers, body: .object(body))
    }

    func listEvents(_ cid: String, since: Int64, pageSize: Int, for caller: Caller, _ step: inout Step) throws {
        assertOnRoomsThread()
        try requireRoomExists(cid, &step)
        try requireVisible(cid, to: caller.user, &step)
        let page = try step.store.events(roomID: cid, since: since, pageSize: pageSize)
        var body: JSONObject = ["cid": .string(cid), "events": .array(page.items.map(\.json))]
        if let next = page.next { body["cursor"] = .string(String(next.number)) }
        step.batch.reply(to: caller, .conversationEvents, body: .object(body))
    }

    /// With members-only visibility, only a current or former member may read the room's members and history.
    func requireVisible(_ cid: String, to user: User, _ step: inout Step) throws {
        assertOnRoomsThread()
        guard configuration.visibility == .members, state.rooms[cid]?.member(forUser: user.id) == nil else { return }
        guard try step.store.hasMembership(userID: user.id, roomID: cid) else { throw RoomError.notJoined(cid) }
    }

    /// Open or closed, the room must exist (history stays readable after a room closes).
    private func requireRoomExists(_ cid: String, _ step: inout Step) throws {
        assertOnRoomsThread()
        if state.rooms[cid] != nil { return }
        guard try step.store.room(id: cid) != nil else { throw RoomError.notFound(cid) }
    }
}

import ParlorProtocol
import ParlorStore

extension RoomsService {
    func listMembers(_ cid: String, query: MembersQuery, tid: JSONValue, client: ClientRef, db: SQLiteConnection,
                     batch: inout Batch) throws {
        loop.assertInLoop()
        try requireRoomExists(cid, db: db)
        try requireVisible(cid, to: client.user, db: db)
        let state: MemberState? = query.allStates ? nil : (query.state ?? .joined)
        let page = try RoomQueries.members(roomID: cid, state: state, descending: query.descending,
                                           pageSize: query.pageSize, cursor: query.cursor, in: db)
        var body: JSONObject = ["cid": .string(cid), "members": .array(page.items.map(\.json))]
        if let next = page.next { body["cursor"] = .string(next.encoded) }
        batch.reply(to: client, .conversationMembers, tid: tid, body: .object(body))
    }

    func listEvents(_ cid: String, since: Int64, pageSize: Int, tid: JSONValue, client: ClientRef, db: SQLiteConnection,
                    batch: inout Batch) throws {
        loop.assertInLoop()
        try requireRoomExists(cid, db: db)
        try requireVisible(cid, to: client.user, db: db)
        let page = try RoomQueries.events(roomID: cid, since: since, pageSize: pageSize, in: db)
        var body: JSONObject = ["cid": .string(cid), "events": .array(page.items.map(\.json))]
        if let next = page.next { body["cursor"] = .string(String(next.number)) }
        batch.reply(to: client, .conversationEvents, tid: tid, body: .object(body))
    }

    /// With members-only visibility, only a current or former member may read the room's members and history.
    func requireVisible(_ cid: String, to user: User, db: SQLiteConnection) throws {
        loop.assertInLoop()
        guard configuration.visibility == .members, rooms[cid]?.member(forUser: user.id) == nil else { return }
        guard try RoomQueries.hasMembership(userID: user.id, roomID: cid, in: db) else { throw RoomError.notJoined(cid) }
    }

    /// Open or closed, the room must exist (history stays readable after a room closes).
    private func requireRoomExists(_ cid: String, db: SQLiteConnection) throws {
        loop.assertInLoop()
        if rooms[cid] != nil { return }
        guard try RoomQueries.room(id: cid, in: db) != nil else { throw RoomError.notFound(cid) }
    }
}

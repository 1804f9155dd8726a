import ParlorProtocol
import ParlorStore

extension RoomsService {
    /// conversation:watch: the connection receives the room's events from now on without joining (no member, no
    /// member:joined). The reply's `last_event_id` is where the live stream starts: events up to it come from
    /// conversation:events, so a watcher sees every id exactly once. Who may watch follows room visibility.
    func watch(_ cid: String, tid: JSONValue, client: ClientRef, db: SQLiteConnection, batch: inout Batch) throws {
        loop.assertInLoop()
        let room = try openRoom(cid, db: db)
        try requireVisible(cid, to: client.user, db: db)
        room.watch(client.handle)
        clients[client.handle]?.watching.insert(cid)
        batch.reply(to: client, .conversationWatch, tid: tid,
                    body: ["cid": .string(cid), "last_event_id": JSONValue(room.lastEventID)])
    }

    /// conversation:unwatch: stops what conversation:watch started; unwatching a room not watched is not an error.
    func unwatch(_ cid: String, tid: JSONValue, client: ClientRef, batch: inout Batch) {
        loop.assertInLoop()
        rooms[cid]?.unwatch(client.handle)
        clients[client.handle]?.watching.remove(cid)
        batch.reply(to: client, .conversationUnwatch, tid: tid, body: ["cid": .string(cid)])
    }
}

import ParlorProtocol

extension RoomsService {
    /// conversation:watch: the connection receives the room's events from now on without joining (no member, no
    /// member:joined). The reply's `last_event_id` is where the live stream starts: events up to it come from
    /// conversation:events, so a watcher sees every id exactly once. Who may watch follows room visibility.
    func watch(_ cid: String, for caller: Caller, _ step: inout Step) throws {
        assertOnRoomsThread()
        let room = try openRoom(cid, &step)
        try requireVisible(cid, to: caller.user, &step)
        room.watch(caller.client.id)
        state.clients[caller.client.id]?.watching.insert(cid)
        step.batch.reply(to: caller, .conversationWatch,
                         body: ["cid": .string(cid), "last_event_id": JSONValue(room.lastEventID)])
    }

    /// conversation:unwatch: stops what conversation:watch started; unwatching a room not watched is not an error.
    func unwatch(_ cid: String, for caller: Caller, _ step: inout Step) {
        assertOnRoomsThread()
        state.rooms[cid]?.unwatch(caller.client.id)
        state.clients[caller.client.id]?.watching.remove(cid)
        step.batch.reply(to: caller, .conversationUnwatch, body: ["cid": .string(cid)])
    }
}

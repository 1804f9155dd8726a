import ParlorBasics
import ParlorProtocol

extension RoomsService {
    /// Records the session and greets the connection with session:success.
    func openSession(_ client: ClientRef, _ step: inout Step) throws {
        assertOnRoomsThread()
        try step.store.openSession(id: client.sessionID, userID: client.user.id, at: clock.now())
        state.clients[client.id] = ClientState(ref: client)
        state.recentAddresses.record(client.address, for: client.user.id, at: clock.now())
        sessionHolders.hold(client.sessionID, on: client.id)
        liveUsers.connectionOpened(client.user.id)
        let body: JSONValue = [
            "session_id": .string(client.sessionID), "user": client.user.json,
            "ice_servers": configuration.iceServersJSON(for: client.user.id), "max_audio_senders": JSONValue(configuration.maxAudioSenders),
            "media": mediaJSON,
        ]
        step.batch.send(ProtocolMessage.event(.sessionSuccess, ["body": body]), to: client)
    }

    /// A connection closed without leaving: each of its rooms where the user has no other connection (on any node)
    /// starts the grace period; the member drops only if no connection of the user is back when it ends.
    func clientDisconnected(_ client: ClientRef, _ step: inout Step) throws {
        assertOnRoomsThread()
        // It holds no session any more, and its replay page returns to the budget.
        sessionHolders.release(client.id)
        replayPacer.end(client.id, &step.batch.outbox, step.store)
        guard let clientState = state.clients.removeValue(forKey: client.id) else { return }
        for roomID in clientState.watching { state.rooms[roomID]?.unwatch(client.id) }
        step.batch.mediaRooms.formUnion(clientState.rooms)
        liveUsers.connectionClosed(client.user.id)
        let now = clock.now()
        try step.store.endSession(id: client.sessionID, at: now)
        for roomID in clientState.rooms {
            guard let room = state.rooms[roomID], let member = room.member(forUser: client.user.id) else { continue }
            if room.detach(client.id, user: client.user.id) { continue }
            step.context(of: room)
            try lastConnectionDetached(member, in: room, at: now, &step)
        }
    }
}

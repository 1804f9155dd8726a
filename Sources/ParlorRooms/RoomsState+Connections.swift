/// The directory's side of a membership: which rooms each connection receives.
extension RoomsState {
    /// The connection receives the room as its user's (the room's attachments and the client's rooms).
    func attach(_ client: ClientRef, to room: LiveRoom) {
        room.attach(client.id, user: client.user.id)
        clients[client.id, default: ClientState(ref: client)].rooms.insert(room.id)
    }

    /// What an ended membership changes in the live room, here or (caught up from its member:left) on another node:
    /// its connections here stop receiving the room, its hand goes down (returns whether it was up), its drop timer
    /// is cancelled, and an empty room's ttl starts at `now`.
    @discardableResult
    func dismiss(_ member: LiveMember, from room: LiveRoom, at now: Int64, timers: RoomTimers) -> Bool {
        if let timer = member.dropTimer { timers.cancel(timer) }
        let (detached, handWasUp) = room.dismiss(member, at: now)
        for clientID in detached { clients[clientID]?.rooms.remove(room.id) }
        if room.memberCount == 0 { timers.scheduleExpiry(of: room) }
        return handWasUp
    }
}

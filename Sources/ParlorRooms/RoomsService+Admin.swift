import ParlorProtocol

extension RoomsService {
    func run(_ operation: Operation, _ step: inout Step) throws -> JSONValue {
        assertOnRoomsThread()
        switch operation {
        case .createRoom(let request):
            return try create(request, &step).json
        case .closeRoom(let roomID, let requester):
            try close(roomID, by: requester, &step)
            return .object([:])
        case .kick(let roomID, let memberID):
            let (room, member) = try joinedMember(memberID, in: roomID, &step)
            try end(member, in: step.context(of: room).room, reason: .kicked, &step)
            return .object([:])
        case .mute(let roomID, let memberID):
            let (room, member) = try joinedMember(memberID, in: roomID, &step)
            step.context(of: room)
            if let message = try step.applyMedia(.mute(true), to: member, in: room, maxAudioSenders: configuration.maxAudioSenders, at: clock.now()) { step.batch.broadcast(message, in: room) }
            return .object([:])
        case .moderate(let roomID, let action, let requester):
            return try moderate(action, roomID: roomID, by: requester, &step)
        case .dropConnections(let roomID, let memberID):
            let (room, member) = try joinedMember(memberID, in: roomID, &step)
            let clientIDs = room.connections(of: member.user.id)
            // Cut after the commit, through the outbox, like every other effect on a connection.
            for clientID in clientIDs { step.batch.outbox.drop(clientID) }
            return ["connections": JSONValue(clientIDs.count)]
        case .disconnectUser(let userIDs, let reason):
            // Memberships end first, so the users' own connections get member:left before the close frame.
            for room in state.rooms.values.sorted(by: { $0.id < $1.id }) {
                for member in room.sortedMembers where userIDs.contains(member.user.id) {
                    try end(member, in: step.context(of: room).room, reason: .kicked, &step)
                }
            }
            let clientIDs = state.clients.values.filter { userIDs.contains($0.ref.user.id) }.map(\.ref.id)
            for clientID in clientIDs { step.batch.outbox.close(clientID, code: ParlorCloseCode.tokenRevoked, reason: reason) }
            return ["connections": JSONValue(clientIDs.count)]
        case .reset:
            try reset(&step)
            return .object([:])
        }
    }

    private func joinedMember(_ memberID: String, in roomID: String, _ step: inout Step) throws -> (LiveRoom, LiveMember) {
        let room = try openRoom(roomID, &step)
        return (room, try room.joinedMember(memberID))
    }

    /// Ends every membership with reason room_closed, then closes the room.
    func close(_ roomID: String, by requester: Requester, _ step: inout Step) throws {
        assertOnRoomsThread()
        let room = try openRoom(roomID, &step)
        switch requester {
        case .admin: break
        case .user(let user):
            guard let user, user.id == room.createdBy else {
                throw RoomError(.roomForbidden, "only the room's creator or an admin can close it")
            }
        }
        let context = step.context(of: room)
        for member in room.sortedMembers {
            try end(member, in: room, reason: .roomClosed, &step)
        }
        if let timer = room.ttlTimer { clock.cancel(timer) }
        try context.store.closeRoom(id: roomID, at: clock.now())
        state.rooms[roomID] = nil
        step.batch.notices.append(.roomFinished(room: room.summary, reason: "closed"))
        logger.info("room closed", ["room": roomID, "reason": "closed by request"])
    }

    /// Test mode: forget everything, and close every connection with 4004 (after the commit, through the outbox),
    /// so clients know their sessions and rooms are gone instead of resuming into nothing.
    private func reset(_ step: inout Step) throws {
        assertOnRoomsThread()
        try step.store.deleteEverything()
        for room in state.rooms.values {
            step.context(of: room)
            if let timer = room.ttlTimer { clock.cancel(timer) }
            for member in room.sortedMembers { if let timer = member.dropTimer { clock.cancel(timer) } }
        }
        state.rooms.removeAll()
        for clientID in Array(state.clients.keys) {
            state.clients[clientID]?.rooms.removeAll()
            step.batch.outbox.close(clientID, code: ParlorCloseCode.serverReset, reason: "server reset")
        }
    }
}

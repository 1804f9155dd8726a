import ParlorProtocol

extension RoomsService {
    func run(_ operation: Operation, _ step: inout Step) throws -> JSONValue {
        assertOnRoomsThread()
        switch operation {
        case .createRoom(let request):
            return try roomDirectory.create(request, &step).json
        case .closeRoom(let roomID, let requester):
            try step.openRoom(roomID).close(by: requester, &step)
            return .object([:])
        case .kick(let roomID, let memberID):
            let (room, member) = try step.joinedMember(memberID, in: roomID)
            try step.context(of: room).end(member, reason: .kicked, &step)
            return .object([:])
        case .mute(let roomID, let memberID):
            let (room, member) = try step.joinedMember(memberID, in: roomID)
            step.context(of: room)
            if let message = try step.applyMedia(.mute(true), to: member, in: room) { step.batch.broadcast(message, in: room) }
            return .object([:])
        case .moderate(let roomID, let action, let requester):
            return try step.openRoom(roomID).moderate(action, by: requester, &step)
        case .dropConnections(let roomID, let memberID):
            let (room, member) = try step.joinedMember(memberID, in: roomID)
            let clientIDs = room.connections(of: member.user.id)
            // Cut after the commit, through the outbox, like every other effect on a connection.
            for clientID in clientIDs { step.batch.outbox.drop(clientID) }
            return ["connections": JSONValue(clientIDs.count)]
        case .disconnectUser(let userIDs, let reason):
            // Memberships end first, so the users' own connections get member:left before the close frame.
            for room in state.rooms.values.sorted(by: { $0.id < $1.id }) {
                for member in room.sortedMembers where userIDs.contains(member.user.id) {
                    try step.context(of: room).end(member, reason: .kicked, &step)
                }
            }
            let clientIDs = state.clients.values.filter { userIDs.contains($0.ref.user.id) }.map(\.ref.id)
            for clientID in clientIDs { step.batch.outbox.close(clientID, code: ParlorCloseCode.tokenRevoked, reason: reason) }
            return ["connections": JSONValue(clientIDs.count)]
        case .startRecording, .stopRecording, .listRecordings, .findRecording, .deleteRecording, .expireRecordings:
            return try runRecording(operation, &step)
        case .liveStreamAccess(let roomID, let userID):
            return try liveStreamAccess(roomID, userID: userID, &step)
        case .reset:
            try roomDirectory.reset(&step)
            return .object([:])
        }
    }
}

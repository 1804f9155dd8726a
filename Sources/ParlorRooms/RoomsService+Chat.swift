import ParlorProtocol

/// Chat and reactions: any member may send them, within its per-member rates (StageRules) and its address's rates
/// in the room (RoomsService+AddressLimits). Messages are stored events; reactions are only broadcast, like speaking
/// changes.
extension RoomsService {
    /// Returns the message's event id.
    func sendMessage(_ text: String, from member: LiveMember, address: String?, in room: LiveRoom, _ step: inout Step) throws -> Int64 {
        assertOnRoomsThread()
        let now = clock.now()
        // The member's own rate first, then its address's; each counts the message only if both let it through.
        var hasRoom = false
        room.update(member.id) { hasRoom = $0.messageWindow.hasRoom(at: now) }
        guard hasRoom else {
            throw RoomError(.messageRateLimited, "at most \(StageRules.messageRate.count) messages per 10 s; wait a moment")
        }
        try admitMessage(from: address, in: room, at: now)
        room.update(member.id) { _ = $0.messageWindow.admit(at: now) }
        return try step.appendAndBroadcast(EventType.messageText, about: member, in: room, body: ["text": .string(text)], at: now).id
    }

    func sendReaction(_ emoji: String, from member: LiveMember, address: String?, in room: LiveRoom, _ step: inout Step) throws {
        assertOnRoomsThread()
        let now = clock.now()
        var hasRoom = false
        room.update(member.id) { hasRoom = $0.reactionWindow.hasRoom(at: now) }
        guard hasRoom else {
            throw RoomError(.reactionRateLimited, "at most \(StageRules.reactionRate.count) reactions per 10 s; wait a moment")
        }
        try admitReaction(from: address, in: room, at: now)
        room.update(member.id) { _ = $0.reactionWindow.admit(at: now) }
        let message = ProtocolMessage.message([
            "type": .string(EventType.reaction.rawValue), "cid": .string(room.id), "from": .string(member.id),
            "timestamp": .string(Timestamp.iso8601(milliseconds: now)),
            "body": ["member_id": .string(member.id), "user": member.user.json, "emoji": .string(emoji)],
        ])
        step.batch.broadcast(message, in: room)
    }
}

import ParlorProtocol

/// Chat and reactions: any member may send them, within its per-member rates (StageRules) and its address's rates
/// in the room (AddressLimits). Messages are stored events; reactions are only broadcast, like speaking changes.
extension RoomContext {
    /// Returns the message's event id.
    /// `content`: text, or an encrypted room's ciphertext, stored and sent as it came.
    func sendMessage(_ content: ChatContent, from member: LiveMember, address: String?, _ step: inout Step) throws -> Int64 {
        let now = rules.clock.now()
        try admit(.message, from: member, address: address, at: now)
        let (field, value) = content.field
        return try step.appendAndBroadcast(EventType.messageText, about: member, in: room, body: [field: .string(value)], at: now).id
    }

    func sendReaction(_ emoji: String, from member: LiveMember, address: String?, _ step: inout Step) throws {
        let now = rules.clock.now()
        try admit(.reaction, from: member, address: address, at: now)
        let message = ProtocolMessage.message([
            "type": .string(EventType.reaction.rawValue), "cid": .string(room.id), "from": .string(member.id),
            "timestamp": .string(Timestamp.iso8601(milliseconds: now)),
            "body": ["member_id": .string(member.id), "user": member.user.json, "emoji": .string(emoji)],
        ])
        step.batch.broadcast(message, in: room)
        // Not stored, so no event tells the other nodes: they are told directly, for their connections in the room.
        if let transaction = step.store as? any ClusterTransaction { try transaction.notifyUnstored(roomID: room.id, message: message) }
    }

    /// The member's own rate first, then its address's; each counts the message only if both let it through.
    private func admit(_ kind: ChatKind, from member: LiveMember, address: String?, at now: Int64) throws {
        var hasRoom = false
        room.update(member.id) { hasRoom = $0[keyPath: kind.memberWindow].hasRoom(at: now) }
        guard hasRoom else {
            throw RoomError(kind.refusal, "at most \(kind.memberRate.count) \(kind.noun) per 10 s; wait a moment")
        }
        try rules.addressLimits.admit(kind, from: address, in: room, at: now)
        room.update(member.id) { _ = $0[keyPath: kind.memberWindow].admit(at: now) }
    }
}

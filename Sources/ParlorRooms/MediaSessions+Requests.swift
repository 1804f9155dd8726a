import ParlorProtocol

/// The audio requests a member sends about itself: audio:* (on/off, mute, speaking) and the rtc:* signalling of
/// mesh audio. The room comes looked up (`RoomsService.openRoom`); the rules are `Step.applyMedia`'s.
extension MediaSessions {
    /// Audio on/off, mute and speaking requested by the member itself: reply, then the event to the room.
    func changeMedia(_ change: MediaChange, in room: LiveRoom, for caller: Caller, _ step: inout Step) throws {
        rules.assertOnRoomsThread()
        guard let member = room.member(forUser: caller.user.id) else { throw RoomError.notJoined(room.id) }
        if case .speaking = change, hasSession(member.id, in: room.id) {
            // Its audio goes through the forwarding unit, which decides who speaks from the audio itself.
            return step.batch.reply(to: caller, change.requestType, body: .object([:]))
        }
        let message = try step.applyMedia(change, to: member, in: room)
        step.context(of: room)
        step.batch.reply(to: caller, change.requestType, body: .object([:]))
        if let message { step.batch.broadcast(message, in: room) }
    }

    /// Relays WebRTC signalling to the connections of member `to` in the room, adding `from`. The sender's connection
    /// must be attached to the room and the target must be a joined member there. Nothing is stored, except for a
    /// target held by another node: kept in `signals` until that node delivers it (ClusterSync+Signals.swift).
    func relay(_ kind: RequestType, in room: LiveRoom, to target: String, payload: JSONObject, for caller: Caller, _ step: inout Step) throws {
        rules.assertOnRoomsThread()
        let cid = room.id
        guard let sender = room.member(forUser: caller.user.id), room.connections(of: caller.user.id).contains(caller.client.id) else {
            throw RoomError.notJoined(cid)
        }
        guard let receiver = room.member(target), receiver.id != sender.id else {
            throw RoomError(.memberUnknownTarget, "\(target) is not another joined member of room \(cid)")
        }
        var body = payload
        body["from"] = .string(sender.id)
        body["to"] = .string(receiver.id)
        let message = ProtocolMessage.message(["type": .string(kind.rawValue), "cid": .string(cid), "from": .string(sender.id), "body": .object(body)])
        step.batch.reply(to: caller, kind, body: .object([:]))
        for clientID in room.connections(of: receiver.user.id) { step.batch.outbox.send(message, to: clientID) }
        // A member with no connection here: stored for the node holding it, if another node does.
        if room.connections(of: receiver.user.id).isEmpty, clustered, let transaction = step.store as? any ClusterTransaction {
            _ = try transaction.relaySignal(roomID: cid, toMember: receiver.id, message: message, at: rules.clock.now())
        }
    }
}

import ParlorProtocol

extension RoomsService {
    /// Relays WebRTC signalling to the connections of member `to` in room `cid`, adding `from`. The sender's connection
    /// must be attached to the room and the target must be a joined member there. Nothing is stored, except for a target
    /// held by another node (RoomsService+Cluster.swift: kept until that node delivers it).
    func relay(_ kind: RequestType, cid: String, to target: String, payload: JSONObject, for caller: Caller, _ step: inout Step) throws {
        assertOnRoomsThread()
        let room = try step.openRoom(cid)
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
        if room.connections(of: receiver.user.id).isEmpty { try relayToOtherNode(message, to: receiver, in: room, &step) }
    }

    /// Audio on/off, mute and speaking requested by the member itself: reply, then the event to the room.
    func changeMedia(_ change: MediaChange, cid: String, for caller: Caller, _ step: inout Step) throws {
        assertOnRoomsThread()
        let room = try step.openRoom(cid)
        guard let member = room.member(forUser: caller.user.id) else { throw RoomError.notJoined(cid) }
        if case .speaking = change, hasMediaSession(member.id, in: cid) {
            // Its audio goes through the forwarding unit, which decides who speaks from the audio itself.
            return step.batch.reply(to: caller, change.requestType, body: .object([:]))
        }
        let message = try applyMedia(change, to: member, in: room, &step)
        step.context(of: room)
        step.batch.reply(to: caller, change.requestType, body: .object([:]))
        if let message { step.batch.broadcast(message, in: room) }
    }

    /// Applies a media change and returns the event frame to broadcast, or nil when nothing changed.
    /// Audio on/off and mute are stored and take sequence ids; speaking is only broadcast.
    /// `by`: the moderator who muted the member (mute-all), added to the event's body.
    func applyMedia(_ change: MediaChange, to member: LiveMember, in room: LiveRoom, by: JSONValue? = nil,
                    _ step: inout Step) throws -> [UInt8]? {
        assertOnRoomsThread()
        var updated = member
        switch change {
        case .enable:
            guard StageRules.mayEnableAudio(room.role(of: member.user.id)) else {
                throw RoomError(.memberNotAllowed, "listeners of room \(room.id) cannot send audio; raise your hand to speak")
            }
            guard !member.audioEnabled else { return nil }
            guard room.audioSenderCount < configuration.maxAudioSenders else {
                throw RoomError(.mediaTooManySenders,
                                "room \(room.id) already has \(configuration.maxAudioSenders) members sending audio; you can listen")
            }
            updated.audioEnabled = true
        case .disable:
            guard member.audioEnabled else { return nil }
            updated.audioEnabled = false
            updated.speaking = false
        case .mute(let on):
            guard member.audioMuted != on else { return nil }
            updated.audioMuted = on
        case .speaking(let on):
            guard member.speaking != on else { return nil }
            room.update(member.id) { $0.speaking = on }
            return ProtocolMessage.message([
                "type": .string(change.eventType.rawValue), "cid": .string(room.id), "from": .string(member.id),
                "timestamp": .string(Timestamp.iso8601(milliseconds: clock.now())),
                "body": ["member_id": .string(member.id), "user": member.user.json],
            ])
        }

        try step.store.setMedia(memberID: member.id, audioEnabled: updated.audioEnabled, audioMuted: updated.audioMuted)
        let eventType = change.eventType.rawValue
        var body: JSONObject = [
            "member_id": .string(member.id), "user": member.user.json,
            "media": ["audio_settings": ["enabled": .bool(updated.audioEnabled), "muted": .bool(updated.audioMuted)]],
        ]
        if let by { body["by"] = by }
        let event = try step.context(of: room).appendEvent(type: eventType, from: member.id, body: .object(body), at: clock.now())
        room.update(member.id) {
            $0.audioEnabled = updated.audioEnabled
            $0.audioMuted = updated.audioMuted
            $0.speaking = updated.speaking
        }
        return ProtocolMessage.event(event)
    }
}

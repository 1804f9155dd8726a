import ParlorProtocol

/// A member's audio as the room's rules have it: on or off, muted, speaking, and who may send at all. The member
/// itself (audio:*), a moderator (mute-all, a demotion) and the forwarding unit's speaking detection change it
/// through here; `MediaSessions` hands the result to the forwarding unit after the commit (`MediaSessions.sync`).
extension Step {
    /// Applies a media change and returns the event frame to broadcast, or nil when nothing changed.
    /// Audio on/off and mute are stored and take sequence ids (the room's context is taken); speaking is only
    /// broadcast (the room does not count as changed). `by`: the moderator who muted the member (mute-all), added
    /// to the event's body. Audio on may not pass `--max-audio-senders` (the step's rules).
    mutating func applyMedia(_ change: MediaChange, to member: LiveMember, in room: LiveRoom, by: JSONValue? = nil) throws -> [UInt8]? {
        let maxAudioSenders = rules.configuration.maxAudioSenders
        var updated = member
        switch change {
        case .enable:
            guard StageRules.mayEnableAudio(room.role(of: member.user.id)) else {
                throw RoomError(.memberNotAllowed, "listeners of room \(room.id) cannot send audio; raise your hand to speak")
            }
            guard !member.audioEnabled else { return nil }
            guard room.audioSenderCount < maxAudioSenders else {
                throw RoomError(.mediaTooManySenders, "room \(room.id) already has \(maxAudioSenders) members sending audio; you can listen")
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
                "timestamp": .string(Timestamp.iso8601(milliseconds: rules.clock.now())),
                "body": ["member_id": .string(member.id), "user": member.user.json],
            ])
        }

        try store.setMedia(memberID: member.id, audioEnabled: updated.audioEnabled, audioMuted: updated.audioMuted)
        let eventType = change.eventType.rawValue
        var body: JSONObject = [
            "member_id": .string(member.id), "user": member.user.json,
            "media": ["audio_settings": ["enabled": .bool(updated.audioEnabled), "muted": .bool(updated.audioMuted)]],
        ]
        if let by { body["by"] = by }
        let event = try context(of: room).appendEvent(type: eventType, from: member.id, body: .object(body), at: rules.clock.now())
        room.update(member.id) {
            $0.audioEnabled = updated.audioEnabled
            $0.audioMuted = updated.audioMuted
            $0.speaking = updated.speaking
        }
        return ProtocolMessage.event(event)
    }
}

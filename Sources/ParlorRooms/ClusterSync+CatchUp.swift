import ParlorProtocol

/// Catching a room up from the events another node committed, without reading the room back: most events carry
/// their whole effect on the live room (a member:joined its member, a member:media its audio settings), so the
/// node applies them as the command applied them where it ran (the same LiveRoom changes), and keeps the full
/// reload (five statements, one of them the room's costliest) for anything else.
extension ClusterSync {
    /// The most events applied in one catch-up; beyond it reading the room back is cheaper.
    static let catchUpLimit = 200

    /// Whether `events` (the room's, in id order) can be applied here: they follow the live room's last event with
    /// no gap, reach `head`, and each is of a kind whose effect is carried whole.
    func canApply(_ events: [EventRecord], to room: LiveRoom, head: Int64) -> Bool {
        var expected = room.lastEventID
        for event in events {
            guard event.id == expected + 1, Self.carriesItsEffect(event) else { return false }
            expected = event.id
        }
        return expected == head
    }

    /// Kinds whose effect on the live room the event carries whole. A kick (reason `kicked`) may come with a ban,
    /// which no event carries; an unknown kind may change anything.
    private static func carriesItsEffect(_ event: EventRecord) -> Bool {
        switch event.type {
        case EventType.memberJoined.rawValue, EventType.memberMedia.rawValue, EventType.audioMuteOn.rawValue,
             EventType.audioMuteOff.rawValue, EventType.memberHand.rawValue, EventType.memberRole.rawValue,
             EventType.roomLocked.rawValue, EventType.messageText.rawValue, EventType.roomRecording.rawValue,
             EventType.roomStream.rawValue:
            return true
        case EventType.memberLeft.rawValue:
            let reason = event.body["reason"]?.stringValue.flatMap(LeaveReason.init(rawValue:))
            return reason == .left || reason == .dropped
        default:
            return false
        }
    }

    /// Applies the events in order; false as soon as one does not fit the live room (a member it names is not
    /// there, a field is missing): the caller then reads the room back, keeping what was applied so far as the
    /// previous room (each change applied is one the record also holds).
    func applyCaughtUp(_ events: [EventRecord], to room: LiveRoom) -> Bool {
        rules.assertOnRoomsThread()
        for event in events {
            guard applyOne(event, to: room) else { return false }
            room.lastEventID = event.id
        }
        return true
    }

    private func applyOne(_ event: EventRecord, to room: LiveRoom) -> Bool {
        let body = event.body
        if event.type == EventType.messageText.rawValue { return true }
        if event.type == EventType.roomLocked.rawValue {
            guard let locked = body["locked"]?.boolValue else { return false }
            room.locked = locked
            return true
        }
        if event.type == EventType.roomStream.rawValue {
            // The live stream made public or private on another node (its listener counts are never stored).
            guard let isPublic = body["public"]?.boolValue else { return false }
            room.stream.isPublic = isPublic
            return true
        }
        if event.type == EventType.roomRecording.rawValue {
            // A recording another node started or stopped: this node's join replies say so too.
            guard let on = body["on"]?.boolValue, let id = body["recording_id"]?.stringValue else { return false }
            room.recording = on ? ActiveRecording(id: id, byMemberID: body["by"]?.stringValue, startedAt: event.createdAt) : nil
            return true
        }
        guard let memberID = body["member_id"]?.stringValue else { return false }
        switch event.type {
        case EventType.memberJoined.rawValue:
            guard room.member(memberID) == nil, let userID = body["user"]?["id"]?.stringValue,
                  let name = body["user"]?["name"]?.stringValue, room.member(forUser: userID) == nil else { return false }
            // A join's event time is the member's joined_at (RoomContext+Membership.swift); it is present, attached
            // where it joined.
            let member = LiveMember(id: memberID, user: User(id: userID, name: name), joinedAt: event.createdAt)
            if let timer = room.admit(member) { rules.clock.cancel(timer) }
            if let (role, stored) = room.initialRole(of: member.user), stored { room.setRole(role, of: userID) }
        case EventType.memberLeft.rawValue:
            guard let member = room.member(memberID) else { return false }
            rules.state.dismiss(member, from: room, at: event.createdAt, timers: rules.timers)
        case EventType.memberMedia.rawValue, EventType.audioMuteOn.rawValue, EventType.audioMuteOff.rawValue:
            guard room.member(memberID) != nil, let settings = body["media"]?["audio_settings"],
                  let enabled = settings["enabled"]?.boolValue, let muted = settings["muted"]?.boolValue else { return false }
            room.update(memberID) {
                $0.audioEnabled = enabled
                $0.audioMuted = muted
                $0.speaking = enabled && $0.speaking
            }
        case EventType.memberHand.rawValue:
            guard let member = room.member(memberID), let raised = body["raised"]?.boolValue else { return false }
            // A raised hand's event time is the hand's (RoomContext+Hands.swift).
            if raised { room.lastHandRaisedAt = max(room.lastHandRaisedAt, event.createdAt) }
            room.setHand(raisedAt: raised ? event.createdAt : nil, of: member.user.id)
        case EventType.memberRole.rawValue:
            guard let member = room.member(memberID), let role = body["role"]?.stringValue.flatMap(MemberRole.init(rawValue:)) else {
                return false
            }
            room.setRole(role, of: member.user.id)
        default:
            return false
        }
        return true
    }
}

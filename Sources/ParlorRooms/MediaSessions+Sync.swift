import ParlorMedia
import ParlorProtocol

/// Between the rooms thread and the media loop: after each batch the forwarding unit is handed what changed, and
/// what the media loop reports (speaking, slots, sessions that failed) comes back as commands.
extension MediaSessions {
    /// After each batch: sessions whose member is no longer joined (left, kicked, dropped after its grace period,
    /// room closed) are ended, and so are sessions of a closed connection once the member has a session on a
    /// connection that is attached (it offered anew). A closed connection's session otherwise lives on while its
    /// member is joined, so a client that reconnects renegotiates it. Then each room's senders are handed over when
    /// they changed. Nothing without the forwarding unit.
    func sync(_ roomIDs: Set<String>) {
        assertOnRoomsThread()
        guard let server else { return }
        homes.prune(roomIDs)
        guard !roomIDs.isEmpty, !sessions.isEmpty || !senders.isEmpty else { return }
        for roomID in roomIDs {
            let room = directory.rooms[roomID]
            let ids = sessionsByRoom[roomID] ?? []
            var liveMembers: Set<String> = []  // members with a session on an attached connection
            if let room {
                for id in ids {
                    guard let record = sessions[id], isAttached(record, in: room) else { continue }
                    liveMembers.insert(record.memberID)
                }
            }
            for id in ids {
                guard let record = sessions[id] else { continue }
                let valid = room.map { room in
                    guard room.member(forUser: record.userID)?.id == record.memberID else { return false }
                    return isAttached(record, in: room) || !liveMembers.contains(record.memberID)
                } ?? false
                if !valid { endSession(id) }
            }
            let roomSenders: Set<String> = room.map { room in
                Set(room.members.values.filter { member in
                    member.audioEnabled && !member.audioMuted && StageRules.mayEnableAudio(room.role(of: member.user.id))
                }.map(\.id))
            } ?? []
            let hasSessions = sessionsByRoom[roomID] != nil
            guard senders[roomID] != roomSenders, hasSessions || senders[roomID] != nil else { continue }
            senders[roomID] = roomSenders.isEmpty && !hasSessions ? nil : roomSenders
            server.setSenders(group: roomID, members: roomSenders)
        }
    }

    /// Whether the session's connection is attached to the room. Another node's connection counts as attached
    /// while its member is joined: that node relayed the offer, and only it knows when the connection closes.
    private func isAttached(_ record: MediaSessionRecord, in room: LiveRoom) -> Bool {
        switch record.key.connection {
        case .local(let clientID): room.connections(of: record.userID).contains(clientID)
        case .remote: room.member(forUser: record.userID)?.id == record.memberID
        }
    }

    /// What the media loop reports: speaking changes become `audio:speaking:*` for the room; slot changes become
    /// `media:slots` to the session's connection.
    func handle(_ event: MediaServerEvent, _ step: inout Step) throws {
        assertOnRoomsThread()
        switch event {
        case .speaking(let roomID, let memberID, let on):
            guard let room = directory.rooms[roomID], let member = room.member(memberID) else { return }
            if let message = try step.applyMedia(.speaking(on), to: member, in: room, maxAudioSenders: configuration.maxAudioSenders,
                                                 at: clock.now()) {
                step.batch.broadcast(message, in: room)
                // Some session of the room came through another node: every node hears it from the home.
                if sessionsByRoom[roomID]?.contains(where: { sessions[$0]?.key.clientID == nil }) == true {
                    try homes.announceSpeaking(memberID, on: on, in: roomID, &step)
                }
            }
        case .ended(let id, let roomID):
            // Ended on the media loop (ICE never completed, DTLS failed): forget it, so it no longer counts.
            guard let record = sessions[id], record.key.roomID == roomID else { return }
            sessions[id] = nil
            sessionIDs[record.key] = nil
            sessionsByRoom[roomID]?.remove(id)
            if sessionsByRoom[roomID]?.isEmpty == true { sessionsByRoom[roomID] = nil }
        case .slots(let id, let roomID, let assignments):
            guard let record = sessions[id], record.key.roomID == roomID else { return }
            sessions[id]?.slots = assignments
            switch record.key.connection {
            case .local(let clientID): step.batch.outbox.send(Self.slotsMessage(roomID, Self.json(assignments)), to: clientID)
            case .remote(let node, let token): try homes.relaySlots(Self.json(assignments), in: roomID, to: node, token: token, &step)
            }
        }
    }

    static func slotsMessage(_ roomID: String, _ slots: JSONValue) -> [UInt8] {
        ProtocolMessage.message(["type": .string(EventType.mediaSlots.rawValue), "cid": .string(roomID), "body": ["slots": slots]])
    }

    static func json(_ slots: [MediaSlotAssignment]) -> JSONValue {
        .array(slots.map { .object(["mid": .string($0.mid), "member_id": $0.member.map(JSONValue.string) ?? .null]) })
    }

    static func describe(_ error: any Error) -> String {
        switch error as? SDPError {
        case .malformedLine(let line)?: "line \(line) is malformed"
        case .notSDP?: "it is not SDP (no v=0 first)"
        case .missing(let what)?: "it needs \(what)"
        case nil: "\(error)"
        }
    }
}

import ParlorBasics
import ParlorMedia
import ParlorProtocol

/// Audio through the server's forwarding unit (--media sfu). The rooms thread decides: who has a media session in
/// which room (a joined member, after an offer from an attached connection), and whose audio is forwarded (joined,
/// audio on, not muted, allowed to speak). The media loop is handed those decisions after each commit and tells the rooms
/// thread who speaks and which member each slot carries.
extension RoomsService {
    /// `session:success`'s `media`: how audio flows on this server.
    var mediaJSON: JSONValue {
        guard let media else { return ["mode": .string(MediaMode.mesh.rawValue)] }
        return ["mode": .string(MediaMode.sfu.rawValue), "slots": JSONValue(media.configuration.slots)]
    }

    /// media:offer: answers the client's offer and opens (or replaces) this connection's session in the room, or,
    /// with several nodes, relays it to the room's media home when that is another node (RoomsService+MediaHome.swift).
    func offerMedia(_ sdp: String, cid: String, for caller: Caller, _ step: inout Step) throws {
        assertOnRoomsThread()
        guard media != nil else { throw RoomError(.requestUnknownType, "this server forwards no audio (--media mesh): use rtc:* signalling") }
        let room = try step.openRoom(cid)
        guard let member = room.member(forUser: caller.user.id), room.connections(of: caller.user.id).contains(caller.client.id) else {
            throw RoomError.notJoined(cid)
        }
        try admitOffer(from: caller)
        let key = MediaSessionKey(clientID: caller.client.id, roomID: cid)
        if let home = try remoteMediaHome(of: cid, &step) { return try relayOffer(sdp, to: home, member: member, key: key, for: caller, &step) }
        forgetRemoteMedia(key)
        let body = try answerOffer(sdp, key: key, member: member, in: room, address: caller.client.address, &step)
        step.batch.reply(to: caller, .mediaOffer, body: body)
    }

    /// Answers an offer of `member` from the connection `key` (here, or relayed by another node) and opens (or
    /// replaces) its session; returns media:offer's reply body.
    func answerOffer(_ sdp: String, key: MediaSessionKey, member: LiveMember, in room: LiveRoom, address: String? = nil,
                     _ step: inout Step) throws -> JSONValue {
        guard let media else { throw RoomError(.requestUnknownType, "this server forwards no audio (--media mesh)") }
        let cid = room.id
        let offer: SessionDescription
        do {
            offer = try SessionDescription(parsing: sdp)
        } catch {
            throw RoomError(.requestInvalidField, "body.sdp cannot be used: \(Self.describe(error))")
        }
        // This connection's session, or the member's session from a connection that is gone when the offer comes
        // from the same RTCPeerConnection (its certificate): a client that reconnected renegotiates it, keeping DTLS.
        let id = state.mediaSessionIDs[key] ?? detachedSession(of: member, in: room, fingerprint: offer.remoteFingerprint, for: key)
            ?? state.nextMediaSessionID
        if state.mediaSessions[id] == nil { try checkMediaSessionLimits(user: member.user.id, address: address) }
        let maySend = StageRules.mayEnableAudio(room.role(of: member.user.id))
        let answer: (sdp: String, setup: MediaSessionSetup)
        let previous = state.mediaSessions[id].flatMap { $0.memberID == member.id ? $0 : nil }
        do {
            answer = try media.answer(offer: offer, session: id, group: cid, member: member.id, maySend: maySend, previous: previous?.setup)
        } catch {
            throw RoomError(.requestInvalidField, "body.sdp cannot be used: \(Self.describe(error))")
        }
        if let previous, previous.key != key { state.mediaSessionIDs[previous.key] = nil }
        // The same peer connection renegotiating keeps its slots (the media thread keeps their senders); a new one
        // starts empty and hears of its senders in media:slots.
        let renegotiates = previous?.setup.remoteFingerprint == answer.setup.remoteFingerprint
        let kept = Dictionary((renegotiates ? previous?.slots ?? [] : []).map { ($0.mid, $0.member) }, uniquingKeysWith: { first, _ in first })
        let slots = answer.setup.slots.map { MediaSlotAssignment(mid: $0.mid, member: kept[$0.mid] ?? nil) }
        if id == state.nextMediaSessionID { state.nextMediaSessionID += 1 }
        state.mediaSessionIDs[key] = id
        let addressKey = address.map(ClientAddress.limitKey) ?? previous?.addressKey
        state.mediaSessions[id] = MediaSessionRecord(key: key, memberID: member.id, userID: member.user.id, addressKey: addressKey,
                                                     setup: answer.setup, slots: slots)
        state.mediaSessionsByRoom[cid, default: []].insert(id)
        // Now, not after the commit: a leave later in this batch must find the session open to close it.
        media.open(answer.setup)
        step.batch.mediaRooms.insert(cid)
        return ["sdp": .string(answer.sdp), "slots": Self.json(slots)]
    }

    /// Whether a member of the room has a media session there (its audio goes through the forwarding unit), here
    /// or, from one of this node's connections, at the room's media home.
    func hasMediaSession(_ memberID: String, in roomID: String) -> Bool {
        assertOnRoomsThread()
        if state.mediaSessionsByRoom[roomID]?.contains(where: { state.mediaSessions[$0]?.memberID == memberID }) == true { return true }
        return state.remoteMedia.contains { $0.key.roomID == roomID && $0.value.memberID == memberID }
    }

    /// media:close: ends this connection's session in the room; nothing to end is not an error.
    func closeMedia(cid: String, for caller: Caller, _ step: inout Step) throws {
        assertOnRoomsThread()
        guard media != nil else { throw RoomError(.requestUnknownType, "this server forwards no audio (--media mesh)") }
        let key = MediaSessionKey(clientID: caller.client.id, roomID: cid)
        if let id = state.mediaSessionIDs[key] { endMediaSession(id) }
        try closeRemoteMedia(key, &step)
        step.batch.reply(to: caller, .mediaClose, body: .object([:]))
    }

    func endMediaSession(_ id: UInt64) {
        guard let record = state.mediaSessions.removeValue(forKey: id) else { return }
        state.mediaSessionIDs[record.key] = nil
        state.mediaSessionsByRoom[record.key.roomID]?.remove(id)
        if state.mediaSessionsByRoom[record.key.roomID]?.isEmpty == true { state.mediaSessionsByRoom[record.key.roomID] = nil }
        media?.close(session: id)
    }

    /// A session of `member` in `room` whose connection is no longer attached there (or is another node's),
    /// offered from the peer connection with `fingerprint`, other than `key`'s.
    private func detachedSession(of member: LiveMember, in room: LiveRoom, fingerprint: DTLSFingerprint?, for key: MediaSessionKey) -> UInt64? {
        guard let fingerprint else { return nil }
        return state.mediaSessionsByRoom[room.id]?.first { id in
            guard let record = state.mediaSessions[id], record.key != key else { return false }
            // Another node's connection: the same peer connection offering again through some node takes it over.
            let detached = record.key.clientID.map { !room.connections(of: record.userID).contains($0) } ?? true
            return record.memberID == member.id && record.setup.remoteFingerprint == fingerprint && detached
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

    /// After each batch: sessions whose member is no longer joined (left, kicked, dropped after its grace period,
    /// room closed) are ended, and so are sessions of a closed connection once the member has a session on a
    /// connection that is attached (it offered anew). A closed connection's session otherwise lives on while its
    /// member is joined, so a client that reconnects renegotiates it. Then each room's senders are handed over when
    /// they changed.
    func syncMedia(_ roomIDs: Set<String>) {
        assertOnRoomsThread()
        pruneRemoteMedia(roomIDs)
        guard let media, !roomIDs.isEmpty, !state.mediaSessions.isEmpty || !state.mediaSenders.isEmpty else { return }
        for roomID in roomIDs {
            let room = state.rooms[roomID]
            let ids = state.mediaSessionsByRoom[roomID] ?? []
            var liveMembers: Set<String> = []  // members with a session on an attached connection
            if let room {
                for id in ids {
                    guard let record = state.mediaSessions[id], isAttached(record, in: room) else { continue }
                    liveMembers.insert(record.memberID)
                }
            }
            for id in ids {
                guard let record = state.mediaSessions[id] else { continue }
                let valid = room.map { room in
                    guard room.member(forUser: record.userID)?.id == record.memberID else { return false }
                    return isAttached(record, in: room) || !liveMembers.contains(record.memberID)
                } ?? false
                if !valid { endMediaSession(id) }
            }
            let senders: Set<String> = room.map { room in
                Set(room.members.values.filter { member in
                    member.audioEnabled && !member.audioMuted && StageRules.mayEnableAudio(room.role(of: member.user.id))
                }.map(\.id))
            } ?? []
            let hasSessions = state.mediaSessionsByRoom[roomID] != nil
            guard state.mediaSenders[roomID] != senders, hasSessions || state.mediaSenders[roomID] != nil else { continue }
            state.mediaSenders[roomID] = senders.isEmpty && !hasSessions ? nil : senders
            media.setSenders(group: roomID, members: senders)
        }
    }

    /// What the media loop reports: speaking changes become `audio:speaking:*` for the room; slot changes become
    /// `media:slots` to the session's connection.
    func handleMediaEvent(_ event: MediaServerEvent, _ step: inout Step) throws {
        assertOnRoomsThread()
        switch event {
        case .speaking(let roomID, let memberID, let on):
            guard let room = state.rooms[roomID], let member = room.member(memberID) else { return }
            if let message = try applyMedia(.speaking(on), to: member, in: room, &step) {
                step.batch.broadcast(message, in: room)
                try announceSpeaking(memberID, on: on, in: roomID, &step)
            }
        case .ended(let id, let roomID):
            // Ended on the media loop (ICE never completed, DTLS failed): forget it, so it no longer counts.
            guard let record = state.mediaSessions[id], record.key.roomID == roomID else { return }
            state.mediaSessions[id] = nil
            state.mediaSessionIDs[record.key] = nil
            state.mediaSessionsByRoom[roomID]?.remove(id)
            if state.mediaSessionsByRoom[roomID]?.isEmpty == true { state.mediaSessionsByRoom[roomID] = nil }
        case .slots(let id, let roomID, let assignments):
            guard let record = state.mediaSessions[id], record.key.roomID == roomID else { return }
            state.mediaSessions[id]?.slots = assignments
            switch record.key.connection {
            case .local(let clientID): step.batch.outbox.send(Self.slotsMessage(roomID, Self.json(assignments)), to: clientID)
            case .remote(let node, let token): try relaySlots(Self.json(assignments), in: roomID, to: node, token: token, &step)
            }
        }
    }

    static func slotsMessage(_ roomID: String, _ slots: JSONValue) -> [UInt8] {
        ProtocolMessage.message(["type": .string(EventType.mediaSlots.rawValue), "cid": .string(roomID), "body": ["slots": slots]])
    }

    private static func json(_ slots: [MediaSlotAssignment]) -> JSONValue {
        .array(slots.map { .object(["mid": .string($0.mid), "member_id": $0.member.map(JSONValue.string) ?? .null]) })
    }

    private static func describe(_ error: any Error) -> String {
        switch error as? SDPError {
        case .malformedLine(let line)?: "line \(line) is malformed"
        case .notSDP?: "it is not SDP (no v=0 first)"
        case .missing(let what)?: "it needs \(what)"
        case nil: "\(error)"
        }
    }
}

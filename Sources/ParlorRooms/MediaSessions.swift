import ParlorBasics
import ParlorMedia
import ParlorProtocol

/// Audio through the server's forwarding unit (--media sfu), as the rooms thread decides it: who has a media session
/// in which room (a joined member, after an offer from an attached connection), the limits on offers and sessions,
/// and whose audio is forwarded (joined, audio on, not muted, allowed to speak). The media loop is handed those
/// decisions after each commit (`sync`) and tells the rooms thread who speaks and which member each slot carries
/// (`handle(_:_:)`). With several nodes, one node serves a room's audio, its media home: offers to another node's
/// home go through `homes` (MediaHomes.swift), and the home answers relayed offers here (MediaSessions+Home.swift).
/// Also the rtc:* signalling of mesh audio (MediaSessions+Requests.swift).
///
/// It owns the sessions, the offer buckets and the senders handed over; rooms and clients it only looks up in the
/// service's `RoomsState`. Confined to the rooms thread (debug builds check at each entry), so
/// not Sendable; `RoomsService` holds one and calls it.
final class MediaSessions {
    /// The forwarding unit; nil: audio goes browser to browser (mesh) and only rtc:* signalling is relayed.
    let server: MediaServer?
    /// This node's connections whose session is at another node's media home, and the offers relayed there.
    let homes: MediaHomes
    /// What a room's rules need (the clock, the configuration, the rooms and clients of the rooms thread, looked up
    /// and never changed here), also for the steps this part makes itself (a relayed offer, a speaking change from
    /// another node's forwarding unit).
    let rules: RoomRules
    /// Whether other nodes share the database (a `ClusterLink`): only then is there a media home to relay to.
    let clustered: Bool

    /// Sessions by id, and their ids by connection and room.
    private(set) var sessions: [UInt64: MediaSessionRecord] = [:]
    private(set) var sessionIDs: [MediaSessionKey: UInt64] = [:]
    private(set) var sessionsByRoom: [String: Set<UInt64>] = [:]
    private var nextSessionID: UInt64 = 1
    /// media:offer rate per connection and per user.
    private var offerBuckets: [ClientID: OfferBucket] = [:]
    private var offerUserBuckets: [String: OfferBucket] = [:]
    /// Per room, the senders last handed to the media loop.
    private var senders: [String: Set<String>] = [:]
    /// The room brought up to date from what other nodes committed, then looked up as commands look rooms up (the
    /// cluster's catch-up and the service's `openRoom`): a relayed offer is answered on the room as stored.
    var openCaughtUpRoom: (String, any ClusterTransaction, inout Batch, inout Step) throws -> LiveRoom = { roomID, _, _, _ in
        throw RoomError.notFound(roomID)
    }

    init(server: MediaServer?, homes: MediaHomes, rules: RoomRules, clustered: Bool) {
        self.server = server
        self.homes = homes
        self.rules = rules
        self.clustered = clustered
    }

    /// `session:success`'s `media`: how audio flows on a server with this forwarding unit (nil: mesh).
    static func json(for server: MediaServer?) -> JSONValue {
        guard let server else { return ["mode": .string(MediaMode.mesh.rawValue)] }
        return ["mode": .string(MediaMode.sfu.rawValue), "slots": JSONValue(server.configuration.slots)]
    }

    /// media:offer and media:close are refused without the forwarding unit, before the room is looked at.
    func requireForwardingUnit(hint: String = "") throws {
        guard server != nil else { throw RoomError(.requestUnknownType, "this server forwards no audio (--media mesh)\(hint)") }
    }

    /// media:offer: answers the client's offer and opens (or replaces) this connection's session in the room, or,
    /// with several nodes, relays it to the room's media home when that is another node (MediaSessions+Home.swift).
    func offer(_ sdp: String, in room: LiveRoom, for caller: Caller, _ step: inout Step) throws {
        rules.assertOnRoomsThread()
        guard let member = room.member(forUser: caller.user.id), room.connections(of: caller.user.id).contains(caller.client.id) else {
            throw RoomError.notJoined(room.id)
        }
        try admitOffer(from: caller)
        let key = MediaSessionKey(clientID: caller.client.id, roomID: room.id)
        // With media links every node serves its own connections; otherwise the room's media home serves them all.
        if !rules.configuration.mediaLinks, let home = try homes.remoteHome(of: room.id, &step) {
            // A session here from when this node was the home is over: the room's audio is served elsewhere now.
            if let id = sessionIDs[key] {
                endSession(id)
                step.batch.mediaRooms.insert(key.roomID)
            }
            return try homes.relayOffer(sdp, to: home, member: member, key: key, for: caller, &step)
        }
        homes.forget(key)
        let body = try answerOffer(sdp, key: key, member: member, in: room, address: caller.client.address, &step)
        step.batch.reply(to: caller, .mediaOffer, body: body)
    }

    /// Answers an offer of `member` from the connection `key` (here, or relayed by another node) and opens (or
    /// replaces) its session; returns media:offer's reply body.
    func answerOffer(_ sdp: String, key: MediaSessionKey, member: LiveMember, in room: LiveRoom, address: String? = nil,
                     _ step: inout Step) throws -> JSONValue {
        guard let server else { throw RoomError(.requestUnknownType, "this server forwards no audio (--media mesh)") }
        let cid = room.id
        let offer: SessionDescription
        do {
            offer = try SessionDescription(parsing: sdp)
        } catch {
            throw RoomError(.requestInvalidField, "body.sdp cannot be used: \(Self.describe(error))")
        }
        // This connection's session, or the member's session from a connection that is gone when the offer comes
        // from the same RTCPeerConnection (its certificate): a client that reconnected renegotiates it, keeping DTLS.
        let id = sessionIDs[key] ?? detachedSession(of: member, in: room, fingerprint: offer.remoteFingerprint, for: key)
            ?? nextSessionID
        if sessions[id] == nil { try checkSessionLimits(user: member.user.id, address: address) }
        let maySend = StageRules.mayEnableAudio(room.role(of: member.user.id))
        let answer: (sdp: String, setup: MediaSessionSetup)
        let previous = sessions[id].flatMap { $0.memberID == member.id ? $0 : nil }
        do {
            answer = try server.answer(offer: offer, session: id, group: cid, member: member.id, maySend: maySend, previous: previous?.setup)
        } catch {
            throw RoomError(.requestInvalidField, "body.sdp cannot be used: \(Self.describe(error))")
        }
        if let previous, previous.key != key { sessionIDs[previous.key] = nil }
        // The same peer connection renegotiating keeps its slots (the media thread keeps their senders); a new one
        // starts empty and hears of its senders in media:slots.
        let renegotiates = previous?.setup.remoteFingerprint == answer.setup.remoteFingerprint
        let kept = Dictionary((renegotiates ? previous?.slots ?? [] : []).map { ($0.mid, $0.member) }, uniquingKeysWith: { first, _ in first })
        let slots = answer.setup.slots.map { MediaSlotAssignment(mid: $0.mid, member: kept[$0.mid] ?? nil) }
        if id == nextSessionID { nextSessionID += 1 }
        sessionIDs[key] = id
        let addressKey = address.map(ClientAddress.limitKey) ?? previous?.addressKey
        sessions[id] = MediaSessionRecord(key: key, memberID: member.id, userID: member.user.id, addressKey: addressKey,
                                          setup: answer.setup, slots: slots)
        sessionsByRoom[cid, default: []].insert(id)
        // Now, not after the commit: a leave later in this batch must find the session open to close it.
        server.open(answer.setup)
        step.batch.mediaRooms.insert(cid)
        return ["sdp": .string(answer.sdp), "slots": Self.json(slots)]
    }

    /// Whether a member of the room has a media session there (its audio goes through the forwarding unit), here
    /// or, from one of this node's connections, at the room's media home.
    func hasSession(_ memberID: String, in roomID: String) -> Bool {
        rules.assertOnRoomsThread()
        if sessionsByRoom[roomID]?.contains(where: { sessions[$0]?.memberID == memberID }) == true { return true }
        return homes.hasSession(memberID, in: roomID)
    }

    /// media:close: ends this connection's session in the room; nothing to end is not an error.
    func close(cid: String, for caller: Caller, _ step: inout Step) throws {
        rules.assertOnRoomsThread()
        try requireForwardingUnit()
        let key = MediaSessionKey(clientID: caller.client.id, roomID: cid)
        if let id = sessionIDs[key] { endSession(id) }
        try homes.closeRemote(key, &step)
        step.batch.reply(to: caller, .mediaClose, body: .object([:]))
    }

    func endSession(_ id: UInt64) {
        guard let record = sessions.removeValue(forKey: id) else { return }
        sessionIDs[record.key] = nil
        sessionsByRoom[record.key.roomID]?.remove(id)
        if sessionsByRoom[record.key.roomID]?.isEmpty == true { sessionsByRoom[record.key.roomID] = nil }
        server?.close(session: id)
    }

    /// A session of `member` in `room` whose connection is no longer attached there (or is another node's),
    /// offered from the peer connection with `fingerprint`, other than `key`'s.
    private func detachedSession(of member: LiveMember, in room: LiveRoom, fingerprint: DTLSFingerprint?, for key: MediaSessionKey) -> UInt64? {
        guard let fingerprint else { return nil }
        return sessionsByRoom[room.id]?.first { id in
            guard let record = sessions[id], record.key != key else { return false }
            // Another node's connection: the same peer connection offering again through some node takes it over.
            let detached = record.key.clientID.map { !room.connections(of: record.userID).contains($0) } ?? true
            return record.memberID == member.id && record.setup.remoteFingerprint == fingerprint && detached
        }
    }

    /// Issue 34 item 2: media sessions were bounded only by connections × rooms (16,000 from one identity in 14 s,
    /// RSS 33 → 236 MiB). Each new session is counted against its user and its client address: throws
    /// `media:error:too-many-sessions` when it would pass `--max-media-sessions-per-user` or
    /// `--max-media-sessions-per-ip` (0: no limit).
    func checkSessionLimits(user: String, address: String?) throws {
        let perUser = rules.configuration.maxMediaSessionsPerUser
        if perUser > 0, sessions.values.count(where: { $0.userID == user }) >= perUser {
            throw RoomError(.mediaTooManySessions, "you already have \(perUser) media sessions open; close one (media:close) first")
        }
        let perAddress = rules.configuration.maxMediaSessionsPerAddress
        if perAddress > 0, let address {
            let key = ClientAddress.limitKey(address)
            if sessions.values.count(where: { $0.addressKey == key }) >= perAddress {
                throw RoomError(.mediaTooManySessions, "your address already has \(perAddress) media sessions open")
            }
        }
    }

    /// Issue 34 item 9: an offer costs the rooms thread about half a millisecond, and 40 connections offering 50
    /// times a second kept a core busy. Throws `media:error:rate-limited` past `--media-offer-rate` per connection
    /// (bursts of `--media-offer-burst`), or twice both per user.
    func admitOffer(from caller: Caller) throws {
        let rate = rules.configuration.mediaOfferRate, burst = Double(rules.configuration.mediaOfferBurst)
        guard rate > 0 else { return }
        let now = rules.clock.now()
        if offerBuckets.count > 4096 { offerBuckets = offerBuckets.filter { rules.state.clients[$0.key] != nil } }
        if offerUserBuckets.count > 4096 { offerUserBuckets = [:] }  // a full bucket is a fresh one
        var connection = offerBuckets[caller.client.id] ?? OfferBucket(burst: burst, now: now)
        var user = offerUserBuckets[caller.user.id] ?? OfferBucket(burst: 2 * burst, now: now)
        // The user's bucket is only charged when the connection's admits.
        let admitted = connection.take(rate: rate, burst: burst, now: now) && user.take(rate: 2 * rate, burst: 2 * burst, now: now)
        offerBuckets[caller.client.id] = connection
        offerUserBuckets[caller.user.id] = user
        guard admitted else {
            throw RoomError(.mediaRateLimited, "at most \(rules.configuration.mediaOfferBurst) media:offer at once, then \(rate) a second; wait a moment")
        }
    }
}

/// Between the rooms thread and the media loop: after each batch the forwarding unit is handed what changed, and
/// what the media loop reports (speaking, slots, sessions that failed) comes back as commands.
extension MediaSessions {
    /// After each batch: sessions whose member is no longer joined (left, kicked, dropped after its grace period,
    /// room closed) are ended, and so are sessions of a closed connection once the member has a session on a
    /// connection that is attached (it offered anew). A closed connection's session otherwise lives on while its
    /// member is joined, so a client that reconnects renegotiates it. Then each room's senders are handed over when
    /// they changed. Nothing without the forwarding unit.
    func sync(_ roomIDs: Set<String>) {
        rules.assertOnRoomsThread()
        guard let server else { return }
        homes.prune(roomIDs)
        guard !roomIDs.isEmpty, !sessions.isEmpty || !senders.isEmpty || rules.configuration.mediaLinks else { return }
        for roomID in roomIDs {
            let room = rules.state.rooms[roomID]
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
            // With media links a node without sessions may still take an open room's remote speakers (for its
            // recording or live stream).
            let hasSessions = sessionsByRoom[roomID] != nil || (rules.configuration.mediaLinks && room != nil)
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
        rules.assertOnRoomsThread()
        switch event {
        case .speaking(let roomID, let memberID, let on):
            guard let room = rules.state.rooms[roomID], let member = room.member(memberID) else { return }
            if let message = try step.applyMedia(.speaking(on), to: member, in: room) {
                step.batch.broadcast(message, in: room)
                // Some session of the room came through another node (every node hears it from the home), or with
                // media links speaking is decided where the speaker's session is: every other node hears it from here.
                if rules.configuration.mediaLinks || sessionsByRoom[roomID]?.contains(where: { sessions[$0]?.key.clientID == nil }) == true {
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

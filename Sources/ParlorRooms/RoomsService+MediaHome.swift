import ParlorBasics
import ParlorProtocol

/// Several nodes with the forwarding unit (issue 11's media decision): one node at a time serves a room's audio,
/// its media home, chosen by the first media:offer in the room (under the room's row lock) and replaced when its
/// node dies. An offer on another node is relayed to the home (`media_relay` rows, NOTIFY "media relay NODE-…"),
/// which answers it as it answers its own connections' offers and opens the session; the answer comes back the same
/// way and the offering node replies. The answer's candidates are the home's address, so the client's audio goes
/// to the home. The home relays each such session's `media:slots` back, and NOTIFYs speaking changes to every node.
/// Who may send is the home's decision from its copy of the room, which catch-up keeps current (a mute on any node
/// is an event). On one node, or SQLite, none of this runs: the home is always this node.
extension RoomsService {
    /// The room's media home when it is another node (chosen now if the room has none, or a dead one); nil: here.
    func remoteMediaHome(of roomID: String, _ step: inout Step) throws -> String? {
        guard cluster != nil, let transaction = step.store as? any MediaHomeTransaction else { return nil }
        let home = try transaction.chooseMediaHome(roomID: roomID)
        return home == transaction.nodeID ? nil : home
    }

    /// media:offer from this node's connection, to the room's media home on another node: the reply waits for
    /// the home's answer (or the timer).
    func relayOffer(_ sdp: String, to home: String, member: LiveMember, key: MediaSessionKey, for caller: Caller, _ step: inout Step) throws {
        guard let transaction = step.store as? any MediaHomeTransaction else { return }
        // A session here from when this node was the home is over: the room's audio is served elsewhere now.
        if let id = state.mediaSessionIDs[key] {
            endMediaSession(id)
            step.batch.mediaRooms.insert(key.roomID)
        }
        var remote = state.remoteMedia[key]
        if remote?.home != home {
            forgetRemoteMedia(key)
            remote = RemoteMediaSession(token: String(nextMediaRelayID()), home: home, memberID: member.id, userID: member.user.id)
        }
        guard let remote else { return }
        let request = nextMediaRelayID()
        let message: JSONValue = ["kind": "offer", "from": .string(transaction.nodeID), "request": JSONValue(Int(request)),
                                  "conn": .string(remote.token), "user": .string(member.user.id), "member": .string(member.id),
                                  "sdp": .string(sdp)]
        try transaction.relayMedia(message.encoded(), roomID: key.roomID, to: home, at: clock.now())
        state.remoteMedia[key] = remote
        state.remoteMediaByToken[remote.token] = key
        let timer = clock.schedule(after: configuration.mediaRelayTimeout) { [weak self] in
            self?.submit(.cluster(.mediaHome(.timedOut(request: request))))
        }
        state.pendingMediaOffers[request] = PendingMediaOffer(caller: caller, key: key, timer: timer)
    }

    /// media:close of a connection whose session is at another node's: relayed there.
    func closeRemoteMedia(_ key: MediaSessionKey, _ step: inout Step) throws {
        guard let remote = state.remoteMedia[key], let transaction = step.store as? any MediaHomeTransaction else { return }
        forgetRemoteMedia(key)
        let message: JSONValue = ["kind": "close", "from": .string(transaction.nodeID), "conn": .string(remote.token)]
        try transaction.relayMedia(message.encoded(), roomID: key.roomID, to: remote.home, at: clock.now())
    }

    func forgetRemoteMedia(_ key: MediaSessionKey) {
        guard let remote = state.remoteMedia.removeValue(forKey: key) else { return }
        state.remoteMediaByToken[remote.token] = nil
    }

    /// After each batch: this node's connections no longer attached to a room (closed, left) stop being the way to
    /// their session at the home, which lives on while the member is joined (a client that reconnects offers again
    /// from the same peer connection, through any node, and takes it over).
    func pruneRemoteMedia(_ roomIDs: Set<String>) {
        guard !state.remoteMedia.isEmpty else { return }
        for (key, remote) in state.remoteMedia where roomIDs.contains(key.roomID) {
            // Written without a closure over `room`: the closure form crashes Swift 6.3.1's -O CopyPropagation pass
            // ("Found outside of lifetime use"), so no release build.
            guard let room = state.rooms[key.roomID], let clientID = key.clientID,
                  room.connections(of: remote.userID).contains(clientID),
                  room.member(forUser: remote.userID)?.id == remote.memberID else {
                forgetRemoteMedia(key)
                continue
            }
        }
    }

    /// At the home: a speaking change goes to every other node's connections too, when some session of the room
    /// came through another node (otherwise nobody there hears the room: no NOTIFY on a lone node).
    func announceSpeaking(_ memberID: String, on: Bool, in roomID: String, _ step: inout Step) throws {
        guard cluster != nil, let transaction = step.store as? any MediaHomeTransaction else { return }
        let relayed = state.mediaSessionsByRoom[roomID]?.contains { state.mediaSessions[$0]?.key.clientID == nil } ?? false
        guard relayed else { return }
        try transaction.notifyMedia(.speaking(home: transaction.nodeID, roomID: roomID, memberID: memberID, on: on))
    }

    /// At the home: a relayed session's slots changed; its node sends media:slots to the connection.
    func relaySlots(_ slots: JSONValue, in roomID: String, to node: String, token: String, _ step: inout Step) throws {
        guard let transaction = step.store as? any MediaHomeTransaction else { return }
        let message: JSONValue = ["kind": "slots", "conn": .string(token), "slots": slots]
        try transaction.relayMedia(message.encoded(), roomID: roomID, to: node, at: clock.now())
    }

    /// At start: where this node's forwarding unit is reached, in its `nodes` row.
    func registerMediaAddress(_ transaction: any ClusterTransaction) throws {
        guard let media, let transaction = transaction as? any MediaHomeTransaction else { return }
        try transaction.setMediaAddress(media.candidates.map(\.description).joined(separator: ","))
    }

    /// At a takeover: rooms whose home was a node taken over lose it (the next offer chooses again); every node
    /// tells its connections that had a session there to offer again.
    func releaseMediaHomes(_ transaction: any ClusterTransaction, _ batch: inout Batch) throws {
        guard let transaction = transaction as? any MediaHomeTransaction else { return }
        try transaction.withSavepoint {
            for (roomID, home) in try transaction.releaseDeadMediaHomes() {
                logger.info("a room's media home stopped: its clients offer again", ["room": roomID, "node": home])
                try transaction.notifyMedia(.restart(home: home, roomID: roomID))
            }
        }
    }

    /// What the relay tells this node (handled before the command's savepoint, RoomsService+Cluster.swift).
    func handleMediaHome(_ signal: MediaHomeSignal, _ transaction: any ClusterTransaction, _ batch: inout Batch) throws {
        assertOnRoomsThread()
        guard let transaction = transaction as? any MediaHomeTransaction else { return }
        switch signal {
        case .relayed:
            let messages = try transaction.withSavepoint { try transaction.takeMediaMessages() }
            for (roomID, bytes) in messages {
                guard let message = try? JSONParser.parse(bytes) else { continue }
                try handleRelayed(message, roomID: roomID, transaction, &batch)
            }
        case .speaking(let home, let roomID, let memberID, let on):
            guard home != transaction.nodeID, let room = state.rooms[roomID], let member = room.member(memberID) else { return }
            var step = Step(store: transaction, batch: Batch(), rules: rules)
            if let event = try applyMedia(.speaking(on), to: member, in: room, &step) { step.batch.broadcast(event, in: room) }
            batch.merge(step.batch)
        case .restart(let home, let roomID):
            let restart = ProtocolMessage.message(["type": .string(EventType.mediaRestart.rawValue), "cid": .string(roomID), "body": .object([:])])
            for (key, remote) in state.remoteMedia where key.roomID == roomID && remote.home == home {
                forgetRemoteMedia(key)
                for (request, pending) in state.pendingMediaOffers where pending.key == key {
                    answerPending(request, with: RoomError(.serverUnavailable, "the room's media home stopped: offer again"), &batch)
                }
                if let clientID = key.clientID { batch.outbox.send(restart, to: clientID) }
            }
        case .timedOut(let request):
            if let key = state.pendingMediaOffers[request]?.key { forgetRemoteMedia(key) }
            answerPending(request, with: RoomError(.serverUnavailable, "the room's media home did not answer: offer again"), &batch)
        }
    }

    private func handleRelayed(_ message: JSONValue, roomID: String, _ transaction: any MediaHomeTransaction, _ batch: inout Batch) throws {
        let token = message["conn"]?.stringValue ?? ""
        switch message["kind"]?.stringValue {
        case "offer":
            try answerRelayedOffer(message, roomID: roomID, transaction, &batch)
        case "close":
            guard let origin = message["from"]?.stringValue,
                  let id = state.mediaSessionIDs[MediaSessionKey(.remote(node: origin, token: token), roomID: roomID)] else { return }
            endMediaSession(id)
            batch.mediaRooms.insert(roomID)
        case "reply":
            guard let request = message["request"]?.intValue.map(UInt64.init) else { return }
            if let body = message["body"] {
                guard let pending = state.pendingMediaOffers.removeValue(forKey: request) else { return }
                clock.cancel(pending.timer)
                batch.reply(to: pending.caller, .mediaOffer, body: body)
            } else {
                let code = message["code"]?.stringValue.flatMap(ErrorCode.init(rawValue:)) ?? .serverInternal
                answerPending(request, with: RoomError(code, message["detail"]?.stringValue ?? "the room's media home refused the offer"), &batch)
            }
        case "slots":
            guard let key = state.remoteMediaByToken[token], let clientID = key.clientID, let slots = message["slots"] else { return }
            batch.outbox.send(Self.slotsMessage(key.roomID, slots), to: clientID)
        default:
            return
        }
    }

    /// At the home: an offer another node relayed. That node vouches for its connection (attached to the room);
    /// the membership is checked here, on the room brought up to date. The answer or the refusal goes back.
    private func answerRelayedOffer(_ message: JSONValue, roomID: String, _ transaction: any MediaHomeTransaction, _ batch: inout Batch) throws {
        guard let origin = message["from"]?.stringValue, let token = message["conn"]?.stringValue,
              let request = message["request"]?.intValue, let userID = message["user"]?.stringValue,
              let memberID = message["member"]?.stringValue, let sdp = message["sdp"]?.stringValue else { return }
        var reply: JSONObject = ["kind": "reply", "request": JSONValue(request)]
        var step = Step(store: transaction, batch: Batch(), rules: rules)
        do {
            try transaction.withSavepoint {
                // Caught up, not locked: nothing stored changes here (a lock met mid-batch could deadlock with another node).
                try sync(roomID, lock: false, transaction, &batch)
                let room = try step.openRoom(roomID)
                guard let member = room.member(forUser: userID), member.id == memberID else { throw RoomError.notJoined(roomID) }
                let key = MediaSessionKey(.remote(node: origin, token: token), roomID: roomID)
                reply["body"] = try answerOffer(sdp, key: key, member: member, in: room, &step)
            }
            batch.merge(step.batch)
        } catch let error as RoomError {
            reply["code"] = .string(error.code.rawValue)
            reply["detail"] = .string(error.detail)
        }
        try transaction.relayMedia(JSONValue.object(reply).encoded(), roomID: roomID, to: origin, at: clock.now())
    }

    private func answerPending(_ request: UInt64, with error: RoomError, _ batch: inout Batch) {
        guard let pending = state.pendingMediaOffers.removeValue(forKey: request) else { return }
        clock.cancel(pending.timer)
        batch.outbox.reply(ProtocolMessage.error(tid: pending.caller.tid, error, requestType: .mediaOffer), to: pending.caller.client.id)
    }

    private func nextMediaRelayID() -> UInt64 {
        defer { state.nextMediaRelayID += 1 }
        return state.nextMediaRelayID
    }
}

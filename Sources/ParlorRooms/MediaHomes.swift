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
///
/// This type is the offering node's side and the wire: this node's connections whose session is at another node's
/// home, the offers waiting for its answer and their timers, and the messages to the home. The home's side (answering
/// a relayed offer, ending its session) is `MediaSessions`', which holds this and calls it. Confined to the rooms
/// thread (debug builds check where its state is touched), so not Sendable.
final class MediaHomes {
    /// The clock, the configuration, the logger and the rooms of the rooms thread (looked up, never changed here).
    private let rules: RoomRules
    /// Whether other nodes share the database (a `ClusterLink`): only then is there a media home to relay to.
    private let clustered: Bool

    /// This node's connections whose media session is on another node, the room's media home, by connection and room
    /// and by the token the home knows them by.
    private var remote: [MediaSessionKey: RemoteMediaSession] = [:]
    private var remoteByToken: [String: MediaSessionKey] = [:]
    /// Relayed offers waiting for the home's answer, by request id.
    private var pendingOffers: [UInt64: PendingMediaOffer] = [:]
    private var nextRelayID: UInt64 = 1
    /// A relayed offer got no answer in time (the service queues `.cluster(.mediaHome(.timedOut))`); set once, at start.
    var relayTimedOut: (UInt64) -> Void = { _ in }

    init(rules: RoomRules, clustered: Bool) {
        self.rules = rules
        self.clustered = clustered
    }

    /// The room's media home when it is another node (chosen now if the room has none, or a dead one); nil: here.
    func remoteHome(of roomID: String, _ step: inout Step) throws -> String? {
        guard clustered, let transaction = step.store as? any MediaHomeTransaction else { return nil }
        let home = try transaction.chooseMediaHome(roomID: roomID)
        return home == transaction.nodeID ? nil : home
    }

    /// Whether one of this node's connections reaches a session of the member at the room's home.
    func hasSession(_ memberID: String, in roomID: String) -> Bool {
        rules.assertOnRoomsThread()
        return remote.contains { $0.key.roomID == roomID && $0.value.memberID == memberID }
    }

    /// media:offer from this node's connection, to the room's media home on another node: the reply waits for
    /// the home's answer (or the timer).
    func relayOffer(_ sdp: String, to home: String, member: LiveMember, key: MediaSessionKey, for caller: Caller, _ step: inout Step) throws {
        rules.assertOnRoomsThread()
        guard let transaction = step.store as? any MediaHomeTransaction else { return }
        var session = remote[key]
        if session?.home != home {
            forget(key)
            session = RemoteMediaSession(token: String(takeRelayID()), home: home, memberID: member.id, userID: member.user.id)
        }
        guard let session else { return }
        let request = takeRelayID()
        let message: JSONValue = ["kind": "offer", "from": .string(transaction.nodeID), "request": JSONValue(Int(request)),
                                  "conn": .string(session.token), "user": .string(member.user.id), "member": .string(member.id),
                                  "sdp": .string(sdp)]
        try transaction.relayMedia(message.encoded(), roomID: key.roomID, to: home, at: rules.clock.now())
        remote[key] = session
        remoteByToken[session.token] = key
        let timedOut = relayTimedOut
        let timer = rules.clock.schedule(after: rules.configuration.mediaRelayTimeout) { timedOut(request) }
        pendingOffers[request] = PendingMediaOffer(caller: caller, key: key, timer: timer)
    }

    /// media:close of a connection whose session is at another node's: relayed there.
    func closeRemote(_ key: MediaSessionKey, _ step: inout Step) throws {
        rules.assertOnRoomsThread()
        guard let session = remote[key], let transaction = step.store as? any MediaHomeTransaction else { return }
        forget(key)
        let message: JSONValue = ["kind": "close", "from": .string(transaction.nodeID), "conn": .string(session.token)]
        try transaction.relayMedia(message.encoded(), roomID: key.roomID, to: session.home, at: rules.clock.now())
    }

    func forget(_ key: MediaSessionKey) {
        rules.assertOnRoomsThread()
        guard let session = remote.removeValue(forKey: key) else { return }
        remoteByToken[session.token] = nil
    }

    /// After each batch: this node's connections no longer attached to a room (closed, left) stop being the way to
    /// their session at the home, which lives on while the member is joined (a client that reconnects offers again
    /// from the same peer connection, through any node, and takes it over).
    func prune(_ roomIDs: Set<String>) {
        rules.assertOnRoomsThread()
        guard !remote.isEmpty else { return }
        for (key, session) in remote where roomIDs.contains(key.roomID) {
            // Written without a closure over `room`: the closure form crashes Swift 6.3.1's -O CopyPropagation pass
            // ("Found outside of lifetime use"), so no release build.
            guard let room = rules.state.rooms[key.roomID], let clientID = key.clientID,
                  room.connections(of: session.userID).contains(clientID),
                  room.member(forUser: session.userID)?.id == session.memberID else {
                forget(key)
                continue
            }
        }
    }

    /// At the home, when some session of the room came through another node (`MediaSessions` knows): a speaking
    /// change goes to every other node's connections too (otherwise nobody there hears the room: no NOTIFY on a lone
    /// node).
    func announceSpeaking(_ memberID: String, on: Bool, in roomID: String, _ step: inout Step) throws {
        guard clustered, let transaction = step.store as? any MediaHomeTransaction else { return }
        try transaction.notifyMedia(.speaking(home: transaction.nodeID, roomID: roomID, memberID: memberID, on: on))
    }

    /// At the home: a relayed session's slots changed; its node sends media:slots to the connection.
    func relaySlots(_ slots: JSONValue, in roomID: String, to node: String, token: String, _ step: inout Step) throws {
        guard let transaction = step.store as? any MediaHomeTransaction else { return }
        let message: JSONValue = ["kind": "slots", "conn": .string(token), "slots": slots]
        try transaction.relayMedia(message.encoded(), roomID: roomID, to: node, at: rules.clock.now())
    }

    /// At a takeover: rooms whose home was a node taken over lose it (the next offer chooses again); every node
    /// tells its connections that had a session there to offer again.
    func releaseMediaHomes(_ transaction: any ClusterTransaction, _ batch: inout Batch) throws {
        guard let transaction = transaction as? any MediaHomeTransaction else { return }
        try transaction.withSavepoint {
            for (roomID, home) in try transaction.releaseDeadMediaHomes() {
                rules.logger.info("a room's media home stopped: its clients offer again", ["room": roomID, "node": home])
                try transaction.notifyMedia(.restart(home: home, roomID: roomID))
            }
        }
    }

    /// Room `roomID` lost its home `home`: this node's connections that had a session there are told to offer again.
    func homeStopped(_ home: String, in roomID: String, _ batch: inout Batch) {
        rules.assertOnRoomsThread()
        let restart = ProtocolMessage.message(["type": .string(EventType.mediaRestart.rawValue), "cid": .string(roomID), "body": .object([:])])
        for (key, session) in remote where key.roomID == roomID && session.home == home {
            forget(key)
            for (request, pending) in pendingOffers where pending.key == key {
                answerPending(request, with: RoomError(.serverUnavailable, "the room's media home stopped: offer again"), &batch)
            }
            if let clientID = key.clientID { batch.outbox.send(restart, to: clientID) }
        }
    }

    /// A relayed offer's timer fired before the home answered.
    func timedOut(_ request: UInt64, _ batch: inout Batch) {
        rules.assertOnRoomsThread()
        if let key = pendingOffers[request]?.key { forget(key) }
        answerPending(request, with: RoomError(.serverUnavailable, "the room's media home did not answer: offer again"), &batch)
    }

    /// The home's reply to a relayed offer: its answer goes to the connection that offered, or its refusal.
    func answered(_ message: JSONValue, _ batch: inout Batch) {
        rules.assertOnRoomsThread()
        guard let request = message["request"]?.intValue.map(UInt64.init) else { return }
        if let body = message["body"] {
            guard let pending = pendingOffers.removeValue(forKey: request) else { return }
            rules.clock.cancel(pending.timer)
            batch.reply(to: pending.caller, .mediaOffer, body: body)
        } else {
            let code = message["code"]?.stringValue.flatMap(ErrorCode.init(rawValue:)) ?? .serverInternal
            answerPending(request, with: RoomError(code, message["detail"]?.stringValue ?? "the room's media home refused the offer"), &batch)
        }
    }

    /// The home's media:slots for the connection it knows by `token`.
    func slotsChanged(_ slots: JSONValue, token: String, _ batch: inout Batch) {
        rules.assertOnRoomsThread()
        guard let key = remoteByToken[token], let clientID = key.clientID else { return }
        batch.outbox.send(MediaSessions.slotsMessage(key.roomID, slots), to: clientID)
    }

    private func answerPending(_ request: UInt64, with error: RoomError, _ batch: inout Batch) {
        guard let pending = pendingOffers.removeValue(forKey: request) else { return }
        rules.clock.cancel(pending.timer)
        batch.outbox.reply(ProtocolMessage.error(tid: pending.caller.tid, error, requestType: .mediaOffer), to: pending.caller.client.id)
    }

    private func takeRelayID() -> UInt64 {
        defer { nextRelayID += 1 }
        return nextRelayID
    }
}

/// A connection of this node whose media session is on another node.
struct RemoteMediaSession {
    let token: String
    let home: String
    let memberID: String
    let userID: String
}

/// A media:offer relayed to the room's media home, until its answer comes back (or the timer gives up).
struct PendingMediaOffer {
    let caller: Caller
    let key: MediaSessionKey
    let timer: RoomsTimer
}

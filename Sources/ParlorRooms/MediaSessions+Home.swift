import ParlorBasics
import ParlorProtocol

/// The media home's side of several nodes (MediaHomes.swift has the whole story): this node answers offers other
/// nodes relayed and ends their sessions, as it does its own connections'. What the relay tells this node arrives
/// as a cluster signal, handled here before the command's savepoint (ClusterSync.swift).
extension MediaSessions {
    /// At start: where this node's forwarding unit is reached, in its `nodes` row.
    func registerMediaAddress(_ transaction: any ClusterTransaction) throws {
        guard let server, let transaction = transaction as? any MediaHomeTransaction else { return }
        try transaction.setMediaAddress(server.candidates.map(\.description).joined(separator: ","))
    }

    /// What the relay tells this node.
    func handleMediaHome(_ signal: MediaHomeSignal, _ transaction: any ClusterTransaction, _ batch: inout Batch) throws {
        rules.assertOnRoomsThread()
        guard let transaction = transaction as? any MediaHomeTransaction else { return }
        switch signal {
        case .relayed:
            let messages = try transaction.withSavepoint { try transaction.takeMediaMessages() }
            for (roomID, bytes) in messages {
                guard let message = try? JSONParser.parse(bytes) else { continue }
                try handleRelayed(message, roomID: roomID, transaction, &batch)
            }
        case .speaking(let home, let roomID, let memberID, let on):
            guard home != transaction.nodeID, let room = rules.state.rooms[roomID], let member = room.member(memberID) else { return }
            var step = Step(store: transaction, batch: Batch(), rules: rules)
            if let event = try step.applyMedia(.speaking(on), to: member, in: room) {
                step.batch.broadcast(event, in: room)
            }
            batch.merge(step.batch)
            // With media links the speaker's packets come here over a link: the slots rank it as it speaks.
            server?.remoteSpeaking(group: roomID, member: memberID, on: on)
        case .restart(let home, let roomID):
            homes.homeStopped(home, in: roomID, &batch)
        case .timedOut(let request):
            homes.timedOut(request, &batch)
        }
    }

    private func handleRelayed(_ message: JSONValue, roomID: String, _ transaction: any MediaHomeTransaction, _ batch: inout Batch) throws {
        let token = message["conn"]?.stringValue ?? ""
        switch message["kind"]?.stringValue {
        case "offer":
            try answerRelayedOffer(message, roomID: roomID, transaction, &batch)
        case "close":
            guard let origin = message["from"]?.stringValue,
                  let id = sessionIDs[MediaSessionKey(.remote(node: origin, token: token), roomID: roomID)] else { return }
            endSession(id)
            batch.mediaRooms.insert(roomID)
        case "reply":
            homes.answered(message, &batch)
        case "slots":
            guard let slots = message["slots"] else { return }
            homes.slotsChanged(slots, token: token, &batch)
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
                let room = try openCaughtUpRoom(roomID, transaction, &batch, &step)
                guard let member = room.member(forUser: userID), member.id == memberID else { throw RoomError.notJoined(roomID) }
                let key = MediaSessionKey(.remote(node: origin, token: token), roomID: roomID)
                reply["body"] = try answerOffer(sdp, key: key, member: member, in: room, &step)
            }
            batch.merge(step.batch)
        } catch let error as RoomError {
            reply["code"] = .string(error.code.rawValue)
            reply["detail"] = .string(error.detail)
        }
        try transaction.relayMedia(JSONValue.object(reply).encoded(), roomID: roomID, to: origin, at: rules.clock.now())
    }
}

/// How the cluster's signals reach the media homes (ClusterSeams.swift): this node's answers here, the offers it
/// relayed to other nodes in `homes`.
extension MediaSessions: ClusterMediaHomes {
    func releaseMediaHomes(_ transaction: any ClusterTransaction, _ batch: inout Batch) throws {
        try homes.releaseMediaHomes(transaction, &batch)
    }
}

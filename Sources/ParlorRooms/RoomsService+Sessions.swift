import ParlorProtocol

/// session:resume, one live connection per session (issue 34): a resume takes the session from the connection
/// holding it (its own, or the one that resumed it last), which is closed with 4005; the replay is paged.
extension RoomsService {
    /// Re-attaches the rooms where the user is still a member (no event: nobody saw them leave), then replays
    /// what the client missed, in order. Rooms where the membership ended are listed as `lost`.
    func resume(_ sessionID: String, lastEventIDs: [(cid: String, lastEventID: Int64)], for caller: Caller,
                _ step: inout Step) throws {
        assertOnRoomsThread()
        guard try step.store.sessionOwner(sessionID: sessionID) == caller.user.id else { throw RoomError.sessionNotFound }
        var resumed: [JSONValue] = []
        var lost: [JSONValue] = []
        var lostReasons = JSONObject()
        var replays: [ReplayCursor] = []
        for (cid, lastEventID) in lastEventIDs {
            guard let room = state.rooms[cid], let member = room.member(forUser: caller.user.id) else {
                lost.append(.string(cid))
                lostReasons[cid] = .string(LostReason.membershipEnded)
                continue
            }
            if room.lastEventID - lastEventID > Int64(configuration.maxReplayEvents) {
                // Too far behind to replay: the client must rejoin and read the member list afresh.
                lost.append(.string(cid))
                lostReasons[cid] = .string(LostReason.tooFarBehind)
                continue
            }
            if room.lastEventID > Int64(configuration.maxRoomEvents), lastEventID < room.lastEventID,
               let oldest = try step.store.events(roomID: cid, since: lastEventID, pageSize: 1).items.first?.id,
               oldest > lastEventID + 1 {
                // Events it missed were pruned (--max-room-events): the same answer, the rejoin reads what is kept.
                lost.append(.string(cid))
                lostReasons[cid] = .string(LostReason.historyPruned)
                continue
            }
            let context = step.context(of: room)
            if member.disconnectedAt != nil { try context.markPresent(member.id) }
            try attach(caller.client, to: room, member: member.id, &step)
            resumed.append(["cid": .string(cid), "member_id": .string(member.id), "last_event_id": JSONValue(room.lastEventID)])
            if lastEventID < room.lastEventID { replays.append(ReplayCursor(roomID: cid, after: lastEventID, upTo: room.lastEventID)) }
        }
        takeOver(sessionID, for: caller.client, &step)
        step.batch.reply(to: caller, .sessionResume,
                         body: ["session_id": .string(caller.client.sessionID), "resumed": .array(resumed), "lost": .array(lost),
                                "lost_reasons": .object(lostReasons), "ice_servers": configuration.iceServersJSON(for: caller.user.id)])
        replayPacer.start(replays, for: caller.client.id, &step.batch.outbox, step.store)
    }

    /// The session moves to the caller's connection; the connection that held it is closed with 4005 (its unsent
    /// output dropped: what it had not read, the new connection is sent).
    private func takeOver(_ sessionID: String, for client: ClientRef, _ step: inout Step) {
        let state = state
        if let previous = sessionHolders.takeOver(sessionID, by: client.id, isConnected: { state.clients[$0] != nil }) {
            step.batch.outbox.close(previous, code: ParlorCloseCode.sessionTakenOver, reason: "session taken over by another connection")
        }
    }
}

/// Why a room of a session:resume is in `lost` (`lost_reasons`, by room id).
enum LostReason {
    /// The membership ended (the grace period passed, the member left or was removed) or the room is gone.
    static let membershipEnded = "membership-ended"
    /// More than `maxReplayEvents` events behind: the membership is still there, a join returns it.
    static let tooFarBehind = "too-far-behind"
    /// Events after the client's last id were deleted by the history cap (`maxRoomEvents`); a join returns it.
    static let historyPruned = "history-pruned"
}

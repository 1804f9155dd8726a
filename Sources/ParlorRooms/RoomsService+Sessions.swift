import ParlorBasics
import ParlorProtocol

extension RoomsService {
    /// How often ended sessions are looked for; a session can be resumed for the grace period after it ended.
    var sessionExpiryInterval: TimeSpan { .seconds(min(60, max(1, configuration.gracePeriod.seconds))) }

    /// Arms the next sweep of ended sessions (rooms thread).
    func scheduleSessionExpiry() {
        assertOnRoomsThread()
        _ = clock.schedule(after: sessionExpiryInterval) { [weak self] in
            guard let self else { return }
            self.submit(.expireSessions)
            self.scheduleSessionExpiry()
        }
    }

    /// Deletes sessions that ended longer ago than the grace period: they can no longer be resumed, and would
    /// otherwise add a row for every connection ever made. Bounded per sweep so one batch stays short.
    func expireSessions(_ step: inout Step) throws {
        assertOnRoomsThread()
        let cutoff = clock.now() - Int64(configuration.gracePeriod.seconds * 1000)
        let deleted = try step.store.deleteSessions(endedBefore: cutoff, limit: Self.sessionsExpiredPerSweep)
        if deleted == Self.sessionsExpiredPerSweep {
            // More are waiting: go on soon, in another batch.
            _ = clock.schedule(after: .milliseconds(100)) { [weak self] in self?.submit(.expireSessions) }
        }
    }

    static let sessionsExpiredPerSweep = 5_000
}

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
            if member.disconnectedAt != nil { try markPresent(member.id, in: room, &step) }
            step.context(of: room)
            try attach(caller.client, to: room, member: member.id, &step)
            resumed.append(["cid": .string(cid), "member_id": .string(member.id), "last_event_id": JSONValue(room.lastEventID)])
            if lastEventID < room.lastEventID { replays.append(ReplayCursor(roomID: cid, after: lastEventID, upTo: room.lastEventID)) }
        }
        takeOver(sessionID, for: caller.client, &step)
        step.batch.reply(to: caller, .sessionResume,
                         body: ["session_id": .string(caller.client.sessionID), "resumed": .array(resumed), "lost": .array(lost),
                                "lost_reasons": .object(lostReasons), "ice_servers": configuration.iceServersJSON(for: caller.user.id)])
        startReplay(replays, for: caller.client, &step)
    }

    /// Records that `clientID` holds `sessionID`.
    func holdSession(_ sessionID: String, on clientID: ClientID) {
        state.sessionHolders[sessionID] = clientID
        state.clients[clientID]?.heldSessions.append(sessionID)
    }

    /// The session moves to the caller's connection; the connection that held it is closed with 4005 (its unsent
    /// output dropped: what it had not read, the new connection is sent). Only one connection may replay a session.
    private func takeOver(_ sessionID: String, for client: ClientRef, _ step: inout Step) {
        if let holder = state.sessionHolders[sessionID], holder != client.id, state.clients[holder] != nil {
            state.clients[holder]?.heldSessions.removeAll { $0 == sessionID }
            step.batch.outbox.close(holder, code: ParlorCloseCode.sessionTakenOver, reason: "session taken over by another connection")
        }
        if state.sessionHolders[sessionID] != client.id { holdSession(sessionID, on: client.id) }
    }

    /// A closed connection holds no session any more, and its replay page returns to the budget.
    func releaseSessions(of clientID: ClientID, _ step: inout Step) {
        for sessionID in state.clients[clientID]?.heldSessions ?? [] where state.sessionHolders[sessionID] == clientID {
            state.sessionHolders[sessionID] = nil
        }
        endReplay(of: clientID, &step)
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

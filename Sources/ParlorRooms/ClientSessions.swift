import ParlorBasics
import ParlorProtocol

/// The connections and their sessions: a connection opens its session (session:success), resumes an older one
/// (session:resume: its rooms re-attached, what it missed replayed), and closes without leaving (each of its rooms
/// where the user has no other connection starts the member's grace period). One live connection per session
/// (issue 34): a resume takes the session from the connection holding it, which is closed with 4005. It owns who
/// holds each session (`SessionHolders`); the connections themselves are the directory's (`RoomsState.clients`).
/// Confined to the rooms thread (the service calls it there; it asserts so in debug builds), so it is not Sendable.
final class ClientSessions {
    private let holders = SessionHolders()
    private let replayPacer: ReplayPacer
    private let liveUsers: LiveUsers
    private let clock: any RoomsClock
    private let configuration: RoomsConfiguration
    private let confined: ConfinedRoomsState

    init(replayPacer: ReplayPacer, liveUsers: LiveUsers, clock: any RoomsClock, configuration: RoomsConfiguration,
         state: ConfinedRoomsState) {
        self.replayPacer = replayPacer
        self.liveUsers = liveUsers
        self.clock = clock
        self.configuration = configuration
        confined = state
    }

    /// Records the session and greets the connection with session:success.
    func open(_ client: ClientRef, _ step: inout Step) throws {
        let state = confined.get()
        try step.store.openSession(id: client.sessionID, userID: client.user.id, at: clock.now())
        state.clients[client.id] = ClientState(ref: client)
        state.recentAddresses.record(client.address, for: client.user.id, at: clock.now())
        holders.hold(client.sessionID, on: client.id)
        liveUsers.connectionOpened(client.user.id)
        let body: JSONValue = [
            "session_id": .string(client.sessionID), "user": client.user.json,
            "ice_servers": configuration.iceServersJSON(for: client.user.id), "max_audio_senders": JSONValue(configuration.maxAudioSenders),
            "media": step.rules.mediaJSON,
        ]
        step.batch.send(ProtocolMessage.event(.sessionSuccess, ["body": body]), to: client)
    }

    /// A connection closed without leaving: each of its rooms where the user has no other connection (on any node)
    /// starts the grace period; the member drops only if no connection of the user is back when it ends.
    func disconnected(_ client: ClientRef, _ step: inout Step) throws {
        let state = confined.get()
        // It holds no session any more, and its replay page returns to the budget.
        holders.release(client.id)
        replayPacer.end(client.id, &step.batch.outbox, step.store)
        guard let clientState = state.clients.removeValue(forKey: client.id) else { return }
        for roomID in clientState.watching { state.rooms[roomID]?.unwatch(client.id) }
        step.batch.mediaRooms.formUnion(clientState.rooms)
        liveUsers.connectionClosed(client.user.id)
        let now = clock.now()
        try step.store.endSession(id: client.sessionID, at: now)
        for roomID in clientState.rooms {
            guard let room = state.rooms[roomID], let member = room.member(forUser: client.user.id) else { continue }
            if room.detach(client.id, user: client.user.id) { continue }
            step.context(of: room)
            try step.rules.attachments.lastConnectionDetached(member, in: room, at: now, &step)
        }
    }

    /// session:resume. Re-attaches the rooms where the user is still a member (no event: nobody saw them leave),
    /// then replays what the client missed, in order, paged (ReplayPacer.swift). Rooms where the membership ended,
    /// or that are too far behind to replay, are listed as `lost`.
    func resume(_ sessionID: String, lastEventIDs: [(cid: String, lastEventID: Int64)], for caller: Caller,
                _ step: inout Step) throws {
        let state = confined.get()
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
            if room.presence.mode == .summary, lastEventID < room.lastEventID,
               try step.store.presenceEventCount(roomID: cid, since: lastEventID, limit: configuration.maxResumedPresenceEvents + 1)
                > configuration.maxResumedPresenceEvents {
                // A summarised audience's comings and goings: a re-join's paged reply is cheaper than replaying them.
                lost.append(.string(cid))
                lostReasons[cid] = .string(LostReason.presenceSummarised)
                continue
            }
            let context = step.context(of: room)
            if member.disconnectedAt != nil { try context.markPresent(member.id) }
            try step.rules.attachments.attach(caller.client, to: room, member: member.id, &step)
            resumed.append(["cid": .string(cid), "member_id": .string(member.id), "last_event_id": JSONValue(room.lastEventID)])
            if lastEventID < room.lastEventID { replays.append(ReplayCursor(roomID: cid, after: lastEventID, upTo: room.lastEventID)) }
        }
        // The session moves to the caller's connection; the one that held it is closed with 4005 (its unsent output
        // dropped: what it had not read, the new connection is sent).
        if let previous = holders.takeOver(sessionID, by: caller.client.id, isConnected: { state.clients[$0] != nil }) {
            step.batch.outbox.close(previous, code: ParlorCloseCode.sessionTakenOver, reason: "session taken over by another connection")
        }
        step.batch.reply(to: caller, .sessionResume,
                         body: ["session_id": .string(caller.client.sessionID), "resumed": .array(resumed), "lost": .array(lost),
                                "lost_reasons": .object(lostReasons), "ice_servers": configuration.iceServersJSON(for: caller.user.id)])
        replayPacer.start(replays, for: caller.client.id, &step.batch.outbox, step.store)
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
    /// A summary-mode stage room whose missed events hold more than `maxResumedPresenceEvents` joins and leaves;
    /// the membership stays, a join returns it with a fresh, paged reply.
    static let presenceSummarised = "presence-summarised"
}

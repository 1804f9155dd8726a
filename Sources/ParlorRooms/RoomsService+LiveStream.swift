import ParlorBasics
import ParlorProtocol

/// A room's live stream as the rooms domain knows it (issue 38): who may listen, whether it is public, how many
/// listen. The mixing and the HTTP listeners are ParlorApp's (`LiveStreams`); it reports the count here. Memory only,
/// like presence: after a restart a stream is private again (the safe default: nobody listens unseen).
struct RoomLiveStream {
    /// Anyone with the link may listen, not only members (room:stream:public).
    var isPublic = false
    /// Listeners on this node now, as the app last reported.
    var listeners = 0
    /// What room:stream last said, and when (rooms clock, ms): listener counts go out at most once a second.
    var announced: (isPublic: Bool, listeners: Int) = (false, 0)
    var announcedAt: Int64 = .min / 2
    var timer: RoomsTimer?

    var json: JSONValue { ["public": .bool(isPublic), "listeners": JSONValue(Int64(listeners))] }

    static let minimumInterval: Int64 = 1_000
}

extension RoomsService {
    /// The app's listener count for the room's live stream on this node. Any thread.
    public func liveListenersChanged(roomID: String, count: Int) {
        submit(.liveListeners(roomID: roomID, count: count))
    }

    /// GET /rooms/{id}/live.ogg: the room is open and streamable here, and the listener may hear it (a member, or
    /// anyone when it is public). Unknown room: 404; closed: its usual error; no token: 401; not a member: 403; the
    /// room's audio on another node: 404 naming that node.
    func liveStreamAccess(_ roomID: String, userID: String?, _ step: inout Step) throws -> JSONValue {
        let room = try step.openRoom(roomID)
        try room.refuseIfEncrypted("stream")
        guard rules.recordings.forwardsAudio else {
            throw RoomError(.roomStreamUnavailable, "this server forwards no audio (--media mesh): room \(roomID) has no live stream")
        }
        if !room.stream.isPublic {
            guard let userID else {
                throw RoomError(.authMissingToken, "room \(roomID)'s live stream is for its members: send a member's token as "
                                + "Authorization: Bearer <jwt> or ?token=<jwt>")
            }
            guard room.member(forUser: userID) != nil else {
                throw RoomError(.roomForbidden, "only the members of room \(roomID) may listen to its live stream (it is not public)")
            }
        }
        if let home = try mediaSessions.homes.remoteHome(of: room.id, &step) {
            throw RoomError(.roomNotFound, "room \(roomID)'s audio is mixed on node \(home): its live stream is served there")
        }
        return .object([:])
    }
}

extension LiveRoom {
    /// room:stream:public: those who may record the room (an open room's creator, a stage room's moderators) make
    /// its live stream public or private; everyone hears room:stream.
    func serveStreamPublic(_ isPublic: Bool, for caller: Caller, _ step: inout Step) throws {
        guard member(forUser: caller.user.id) != nil else { throw RoomError.notJoined(id) }
        try refuseIfEncrypted("stream")
        guard mayRecord(caller.user.id) else {
            throw RoomError(.memberNotAllowed, mode == .stage ? "only a moderator of room \(id) may make its live stream public or private"
                : "only the creator of room \(id) may make its live stream public or private")
        }
        stream.isPublic = isPublic
        sendStreamStatus(&step.batch.outbox, rules: step.rules)
        step.batch.reply(to: caller, .roomStreamPublic, body: stream.json)
    }

    /// The app's count changed: room:stream now, or once a second has passed since the last one.
    func liveListenersChanged(to count: Int, _ outbox: inout Outbox, rules: RoomRules) {
        stream.listeners = max(0, count)
        guard stream.timer == nil else { return }
        let wait = stream.announcedAt + RoomLiveStream.minimumInterval - rules.clock.now()
        if wait <= 0 {
            sendStreamStatus(&outbox, rules: rules)
        } else {
            rules.timers.scheduleStreamStatus(of: self, after: .milliseconds(Int(wait)))
        }
    }

    /// room:stream to every connection of the room, unless it would say what the last one said.
    func sendStreamStatus(_ outbox: inout Outbox, rules: RoomRules) {
        if let timer = stream.timer { rules.timers.cancel(timer) }
        stream.timer = nil
        guard stream.announced != (stream.isPublic, stream.listeners) else { return }
        let now = rules.clock.now()
        stream.announced = (stream.isPublic, stream.listeners)
        stream.announcedAt = now
        let message = unstoredEvent(.roomStream, ["public": .bool(stream.isPublic), "listeners": JSONValue(Int64(stream.listeners))], at: now)
        forEachConnection { outbox.sendEvent(message, to: $0) }
    }
}

extension RoomsService {
    /// `ended` hears (on the rooms thread, after the commit) each room that closed: its live streams end with it.
    public func onRoomsClosed(_ ended: @escaping @Sendable (_ roomID: String) -> Void) {
        thread.execute { [self] in addBatchObserver(ClosedRoomsObserver(ended: ended)) }
    }
}

/// After a commit: the rooms the batch changed that are no longer live have closed.
struct ClosedRoomsObserver: BatchObserver {
    let ended: @Sendable (String) -> Void

    func batchDidCommit(_ end: BatchEnd, in rooms: RoomsService) {
        for roomID in end.changedRooms where rooms.state.rooms[roomID] == nil { ended(roomID) }
    }

    func batchDidRollBack(_ end: BatchEnd, in rooms: RoomsService) {}
}

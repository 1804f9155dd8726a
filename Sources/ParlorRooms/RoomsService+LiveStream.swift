import ParlorBasics
import ParlorProtocol

/// A room's live stream as the rooms domain knows it (issue 38): who may listen, whether it is public, how many
/// listen. The mixing and the HTTP listeners are ParlorApp's (`LiveStreams`); it reports the listeners here, which are
/// this node's memory only. Whether the stream is public is stored with the room (`rooms.stream_public`).
struct RoomLiveStream {
    /// Anyone with the link may listen, not only members (room:stream:public).
    var isPublic = false
    /// Listeners on this node now, as the app last reported, and who they are: the members whose tokens opened their
    /// streams, and how many came without one (while the stream was public).
    var listeners = 0
    var listeningUsers: Set<String> = []
    var anonymousListeners = 0
    /// What room:stream last said, and when (rooms clock, ms): listener counts go out at most once a second.
    var announced: (isPublic: Bool, listeners: Int) = (false, 0)
    var announcedAt: Int64 = .min / 2
    var timer: RoomsTimer?

    var json: JSONValue { ["public": .bool(isPublic), "listeners": JSONValue(Int64(listeners))] }

    static let minimumInterval: Int64 = 1_000
}

/// Who listens to a room's live stream on this node, as the app reports it.
public struct LiveListeners: Sendable, Equatable {
    public var count: Int
    /// The users whose tokens opened streams.
    public var users: Set<String>
    /// Streams opened without a token (the stream was public).
    public var anonymous: Int

    public init(count: Int, users: Set<String>, anonymous: Int) {
        self.count = count
        self.users = users
        self.anonymous = anonymous
    }
}

/// Listeners the app must cut off: a room's stream is no longer theirs to hear.
public enum LiveStreamCut: Sendable, Equatable {
    /// The room closed: every listener.
    case everyone
    /// The stream is members-only: these users are no longer members, and (`anonymous`) those without a token go too.
    case listeners(users: Set<String>, anonymous: Bool)
}

extension RoomsService {
    /// The app's listeners of the room's live stream on this node. Any thread.
    public func liveListenersChanged(roomID: String, listeners: LiveListeners) {
        submit(.liveListeners(roomID: roomID, listeners))
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
        // With media links any node mixes the stream: listening there brings it every speaker over the links.
        if !configuration.mediaLinks, let home = try mediaSessions.homes.remoteHome(of: room.id, &step) {
            throw RoomError(.roomNotFound, "room \(roomID)'s audio is mixed on node \(home): its live stream is served there")
        }
        return .object([:])
    }
}

extension LiveRoom {
    /// room:stream:public: those who may record the room (an open room's creator, a stage room's moderators) make
    /// its live stream public or private; everyone hears room:stream.
    func serveStreamPublic(_ isPublic: Bool, for caller: Caller, _ step: inout Step) throws {
        guard let member = member(forUser: caller.user.id) else { throw RoomError.notJoined(id) }
        try refuseIfEncrypted("stream")
        guard mayRecord(caller.user.id) else {
            throw RoomError(.memberNotAllowed, mode == .stage ? "only a moderator of room \(id) may make its live stream public or private"
                : "only the creator of room \(id) may make its live stream public or private")
        }
        if stream.isPublic != isPublic {
            // Stored with the room (it survives a restart) and as a room:stream event with an id, which other nodes
            // apply when they catch the room up. The room is changed: made private, the observer cuts off who may no
            // longer listen.
            let context = step.context(of: self)
            try context.store.setStreamPublic(roomID: id, isPublic)
            stream.isPublic = isPublic
            let now = step.rules.clock.now()
            let event = try context.appendEvent(type: EventType.roomStream.rawValue, from: member.id, body: stream.json, at: now)
            step.batch.broadcast(event, in: self)
            stream.announced = (stream.isPublic, stream.listeners)
            stream.announcedAt = now
        }
        step.batch.reply(to: caller, .roomStreamPublic, body: stream.json)
    }

    /// The app's listeners changed: room:stream now, or once a second has passed since the last one.
    func liveListenersChanged(to listeners: LiveListeners, _ outbox: inout Outbox, rules: RoomRules) {
        stream.listeners = max(0, listeners.count)
        stream.listeningUsers = listeners.users
        stream.anonymousListeners = listeners.anonymous
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
    /// `cut` hears (on the rooms thread, after each commit) whom a room's live stream is no longer for: everyone when
    /// the room closed; while it is members-only, listeners whose membership ended (left, kicked, dropped) and those
    /// who came without a token. Nobody listens who may not.
    public func onLiveStreamCuts(_ cut: @escaping @Sendable (_ roomID: String, LiveStreamCut) -> Void) {
        thread.execute { [self] in addBatchObserver(LiveStreamAccessObserver(cut: cut)) }
    }
}

/// After a commit, for each room the batch changed: closed (no longer live), or members-only with listeners who are
/// not members. O(listening users) per changed room with listeners; nothing for the others.
struct LiveStreamAccessObserver: BatchObserver {
    let cut: @Sendable (String, LiveStreamCut) -> Void

    func batchDidCommit(_ end: BatchEnd, in rooms: RoomsService) {
        for roomID in end.changedRooms {
            guard let room = rooms.state.rooms[roomID] else {
                cut(roomID, .everyone)
                continue
            }
            let stream = room.stream
            guard !stream.isPublic, stream.listeners > 0 else { continue }
            let gone = stream.listeningUsers.filter { room.member(forUser: $0) == nil }
            if !gone.isEmpty || stream.anonymousListeners > 0 { cut(roomID, .listeners(users: gone, anonymous: stream.anonymousListeners > 0)) }
        }
    }

    func batchDidRollBack(_ end: BatchEnd, in rooms: RoomsService) {}
}

import ParlorBasics
import ParlorMetrics
import ParlorProtocol

/// The open rooms as a whole: creating one (within the server's, the user's and the address's caps), loading them
/// from storage at start, reading rooms back after a failed batch, and forgetting them all (test mode's reset). It
/// owns what is about the set of rooms rather than one room: the newest room's creation time and the rooms whose
/// re-read failed. The rooms themselves are the directory's (`RoomsState.rooms`). Confined to the rooms thread
/// (the service calls it there; it asserts so in debug builds), so it is not Sendable.
final class RoomDirectory {
    private let store: any RoomStore
    private let clock: any RoomsClock
    private let configuration: RoomsConfiguration
    private let logger: Logger
    private let metrics: ServerMetrics
    private let addressLimits: AddressLimits
    private let timers: RoomTimers
    private let confined: ConfinedRoomsState

    /// The newest room's created_at: rooms list newest first by it, so it must increase even within a millisecond.
    var lastRoomCreatedAt: Int64 = 0
    /// Rooms whose re-read after a failed batch failed too (the database unreachable): memory may be ahead of the
    /// record (a join that never committed), so they are read again before each batch until it works.
    private(set) var staleRooms: Set<String> = []

    init(store: any RoomStore, clock: any RoomsClock, configuration: RoomsConfiguration, logger: Logger, metrics: ServerMetrics,
         timers: RoomTimers, state: ConfinedRoomsState) {
        self.store = store
        self.clock = clock
        self.configuration = configuration
        self.logger = logger
        self.metrics = metrics
        addressLimits = AddressLimits(configuration, metrics: metrics)
        self.timers = timers
        confined = state
    }

    func create(_ request: NewRoom, _ step: inout Step) throws -> RoomRecord {
        let state = confined.get()
        guard state.rooms.count < configuration.maxOpenRooms else {
            throw RoomError(.roomServerFull, "this server already has \(configuration.maxOpenRooms) open rooms")
        }
        if let creator = request.createdBy,
           state.rooms.values.lazy.filter({ $0.createdBy == creator.id }).count >= configuration.maxRoomsPerUser {
            metrics.rateLimited(.roomsPerUser)
            throw RoomError(.roomTooManyRooms, "you already have \(configuration.maxRoomsPerUser) open rooms")
        }
        try addressLimits.checkOpenRooms(createdFrom: request.createdFrom, among: state.rooms.values)
        if let ttl = request.ttl, ttl > configuration.maxRoomTTL { throw RoomError.ttlTooLong(configuration.maxRoomTTL) }
        let id = Identifier.make(Identifier.room)
        let name = request.name ?? id.lowercased()
        let now = max(clock.now(), lastRoomCreatedAt + 1)
        let ttl = request.ttl ?? configuration.defaultRoomTTL
        var record = RoomRecord(id: id, name: name, displayName: request.displayName, createdBy: request.createdBy?.id,
                                createdAt: now, closedAt: nil, ttl: ttl, maxMembers: request.maxMembers, memberCount: 0, lastEventID: 0)
        record.mode = request.mode
        record.e2ee = request.e2ee
        try step.store.createRoom(record, createdFrom: request.createdFrom)
        let room = LiveRoom(record: record, emptySince: now)
        room.createdFrom = request.createdFrom
        state.rooms[id] = room
        lastRoomCreatedAt = now
        step.context(of: room)
        step.batch.notices.append(.roomStarted(room: room.summary))
        timers.scheduleExpiry(of: room)
        return record
    }

    /// At start, on a single node: load open rooms, give every JOINED member a fresh grace period, and arm room
    /// expiry. Returns how many memberships a previous run left joined.
    func recover() throws -> Int {
        let state = confined.get()
        let now = clock.now()
        let (recoveredMembers, openRooms, latestCreatedAt) = try store.write { transaction in
            let recovered = try transaction.markPreviousRunAway(at: now)
            try limitStoredRooms(transaction)
            let rooms = try transaction.openRoomStates()
            let stages = try rooms.map { try transaction.stage(roomID: $0.record.id, at: now) }
            return (recovered, Array(zip(rooms, stages)), try transaction.latestRoomCreatedAt())
        }
        for (stored, stage) in openRooms {
            // Every member away since this start (the previous run's connections are gone).
            let room = LiveRoom(stored: stored, stage: stage, emptySince: LiveRoom.emptySinceAtStart(stored), createdFrom: stored.createdFrom,
                                replacing: nil) { record, _ in LiveMember(record, disconnectedAt: now) }
            state.rooms[room.id] = room
        }
        lastRoomCreatedAt = latestCreatedAt
        for room in state.rooms.values {
            for member in room.sortedMembers { timers.scheduleDrop(member.id, in: room, after: configuration.gracePeriod) }
            if room.memberCount == 0 { timers.scheduleExpiry(of: room) }
            // No connection has been told a mode yet: a stage room loaded past the limit starts in summary.
            if room.mode == .stage {
                room.presence.mode = PresenceMode.next(from: .full, count: room.memberCount, limit: configuration.fullPresenceLimit)
                room.presence.committedMode = room.presence.mode
            }
        }
        return recoveredMembers
    }

    /// At start: rooms stored with a ttl above today's maximum (a flood from before the limit, or a lowered
    /// --max-room-ttl) get the maximum, so they expire instead of holding their places for a year.
    func limitStoredRooms(_ transaction: any RoomTransaction) throws {
        let shortened = try transaction.limitOpenRoomTTLs(to: configuration.maxRoomTTL)
        if shortened > 0 {
            logger.warning("open rooms had a ttl above --max-room-ttl and were given the maximum",
                           ["rooms": String(shortened), "ttl": String(configuration.maxRoomTTL)])
        }
    }

    /// After a failed commit, re-reads these rooms' members from the store so memory matches what is stored.
    func reload(_ roomIDs: Set<String>) {
        let state = confined.get()
        guard !roomIDs.isEmpty else { return }
        do {
            let now = clock.now()
            let stored = try store.read { reader in
                try roomIDs.map { ($0, try reader.openRoomState(id: $0), try reader.stage(roomID: $0, at: now)) }
            }
            for (roomID, stored, stage) in stored {
                guard let stored else {
                    state.rooms[roomID] = nil
                    continue
                }
                let previous = state.rooms[roomID]
                // Members as stored, each keeping its grace period (away since, drop timer) from before.
                state.rooms[roomID] = LiveRoom(stored: stored, stage: stage, emptySince: stored.record.memberCount == 0 ? clock.now() : nil,
                                               createdFrom: previous?.createdFrom, replacing: previous) { record, previous in
                    var member = LiveMember(record, disconnectedAt: previous?.disconnectedAt)
                    member.dropTimer = previous?.dropTimer
                    return member
                }
                // Its room:presence, if it switched, never went out.
                state.rooms[roomID]?.presence.mode = previous?.presence.committedMode ?? .full
            }
            staleRooms.subtract(roomIDs)
        } catch {
            logger.error("could not reload rooms after a failed write", ["error": "\(error)"])
            staleRooms.formUnion(roomIDs)
        }
    }

    /// Before a batch: the rooms a failed re-read left stale are read again (until the database answers), so no
    /// command decides on a member that was never stored. Returns the rooms read back (their live users and media
    /// must follow), or nil when none were stale or the read failed again.
    func reloadStale() -> Set<String>? {
        guard !staleRooms.isEmpty else { return nil }
        let stale = staleRooms
        reload(stale)
        return staleRooms.isEmpty ? stale : nil
    }

    /// Test mode: forget everything, and close every connection with 4004 (after the commit, through the outbox),
    /// so clients know their sessions and rooms are gone instead of resuming into nothing.
    func reset(_ step: inout Step) throws {
        let state = confined.get()
        try step.store.deleteEverything()
        for room in state.rooms.values {
            step.context(of: room)
            if let timer = room.ttlTimer { timers.cancel(timer) }
            for member in room.sortedMembers { if let timer = member.dropTimer { timers.cancel(timer) } }
        }
        state.rooms.removeAll()
        for clientID in Array(state.clients.keys) {
            state.clients[clientID]?.rooms.removeAll()
            step.batch.outbox.close(clientID, code: ParlorCloseCode.serverReset, reason: "server reset")
        }
    }
}

import ParlorBasics
import ParlorMetrics
import ParlorProtocol

extension RoomsService {
    func create(_ request: NewRoom, _ step: inout Step) throws -> RoomRecord {
        assertOnRoomsThread()
        guard state.rooms.count < configuration.maxOpenRooms else {
            throw RoomError(.roomServerFull, "this server already has \(configuration.maxOpenRooms) open rooms")
        }
        if let creator = request.createdBy,
           state.rooms.values.lazy.filter({ $0.createdBy == creator.id }).count >= configuration.maxRoomsPerUser {
            metrics.rateLimited(.roomsPerUser)
            throw RoomError(.roomTooManyRooms, "you already have \(configuration.maxRoomsPerUser) open rooms")
        }
        try rules.addressLimits.checkOpenRooms(createdFrom: request.createdFrom, among: state.rooms.values)
        if let ttl = request.ttl, ttl > configuration.maxRoomTTL { throw RoomError.ttlTooLong(configuration.maxRoomTTL) }
        let id = Identifier.make(Identifier.room)
        let name = request.name ?? id.lowercased()
        let now = max(clock.now(), state.lastRoomCreatedAt + 1)
        let ttl = request.ttl ?? configuration.defaultRoomTTL
        var record = RoomRecord(id: id, name: name, displayName: request.displayName, createdBy: request.createdBy?.id,
                                createdAt: now, closedAt: nil, ttl: ttl, maxMembers: request.maxMembers, memberCount: 0, lastEventID: 0)
        record.mode = request.mode
        try step.store.createRoom(record, createdFrom: request.createdFrom)
        let room = LiveRoom(record: record, emptySince: now)
        room.createdFrom = request.createdFrom
        state.rooms[id] = room
        state.lastRoomCreatedAt = now
        step.context(of: room)
        step.batch.notices.append(.roomStarted(room: room.summary))
        rules.timers.scheduleExpiry(of: room)
        return record
    }

    /// After a failed commit, re-reads these rooms' members from the store so memory matches what is stored.
    func reload(_ roomIDs: Set<String>) {
        assertOnRoomsThread()
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
            }
            state.staleRooms.subtract(roomIDs)
        } catch {
            logger.error("could not reload rooms after a failed write", ["error": "\(error)"])
            state.staleRooms.formUnion(roomIDs)
        }
    }

    /// Before a batch: the rooms a failed re-read left stale are read again (until the database answers), so no
    /// command decides on a member that was never stored. Their live users and media follow.
    func reloadStaleRooms() {
        assertOnRoomsThread()
        guard !state.staleRooms.isEmpty else { return }
        let stale = state.staleRooms
        reload(stale)
        guard state.staleRooms.isEmpty else { return }
        if media != nil { syncMedia(stale) }
        syncLiveUsers(stale)
    }
}

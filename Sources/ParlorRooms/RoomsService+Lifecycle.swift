import ParlorMetrics
import ParlorProtocol
import ParlorLoop
import ParlorStore

extension RoomsService {
    func create(_ request: NewRoom, db: SQLiteConnection, batch: inout Batch) throws -> RoomRecord {
        loop.assertInLoop()
        guard rooms.count < configuration.maxOpenRooms else {
            throw RoomError(.roomServerFull, "this server already has \(configuration.maxOpenRooms) open rooms")
        }
        if let creator = request.createdBy,
           rooms.values.lazy.filter({ $0.createdBy == creator.id }).count >= configuration.maxRoomsPerUser {
            metrics.rateLimited(.roomsPerUser)
            throw RoomError(.roomTooManyRooms, "you already have \(configuration.maxRoomsPerUser) open rooms")
        }
        try checkAddressCap(request.createdFrom)
        if let ttl = request.ttl, ttl > configuration.maxRoomTTL { throw RoomError.ttlTooLong(configuration.maxRoomTTL) }
        let id = Identifier.make(Identifier.room)
        let name = request.name ?? id.lowercased()
        let now = max(Timestamp.nowMilliseconds(), lastRoomCreatedAt + 1)
        let ttl = request.ttl ?? configuration.defaultRoomTTL
        do {
            try db.run("""
                INSERT INTO rooms (id, name, display_name, created_by, created_at, ttl, max_members, empty_since, created_from)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [.text(id), .text(name), .text(request.displayName), SQLValue(request.createdBy?.id), .integer(now),
                      .integer(ttl), SQLValue(request.maxMembers), .integer(now), SQLValue(request.createdFrom)])
        } catch let error as StoreError where error.isUniqueViolation {
            throw RoomError.nameTaken(name)
        }
        let record = RoomRecord(id: id, name: name, displayName: request.displayName, createdBy: request.createdBy?.id,
                                createdAt: now, closedAt: nil, ttl: ttl, maxMembers: request.maxMembers, memberCount: 0, lastEventID: 0)
        let room = LiveRoom(record: record, emptySince: now)
        room.createdFrom = request.createdFrom
        rooms[id] = room
        lastRoomCreatedAt = now
        batch.touchedRooms.insert(id)
        batch.notices.append(.roomStarted(room: room.summary))
        scheduleExpiry(of: room)
        return record
    }

    /// Arms the timer that closes an empty room once it has been empty for its ttl.
    func scheduleExpiry(of room: LiveRoom) {
        loop.assertInLoop()
        guard let emptySince = room.emptySince else { return }
        if let timer = room.ttlTimer { loop.cancelTimer(timer) }
        let dueAt = emptySince + room.ttl * 1000
        let delay = max(0, dueAt - Timestamp.nowMilliseconds())
        let roomID = room.id
        room.ttlTimer = loop.schedule(after: .milliseconds(Int(delay))) { [weak self] in
            self?.submit(.closeIfExpired(roomID: roomID))
        }
    }

    func closeIfExpired(roomID: String, db: SQLiteConnection, batch: inout Batch) throws {
        loop.assertInLoop()
        guard let room = rooms[roomID], room.memberCount == 0, let emptySince = room.emptySince else { return }
        let now = Timestamp.nowMilliseconds()
        guard now >= emptySince + room.ttl * 1000 else {
            scheduleExpiry(of: room)
            return
        }
        try db.run("UPDATE rooms SET closed_at = ? WHERE id = ? AND closed_at IS NULL", [.integer(now), .text(roomID)])
        rooms[roomID] = nil
        room.ttlTimer = nil
        batch.touchedRooms.insert(roomID)
        batch.notices.append(.roomFinished(room: room.summary, reason: "ttl"))
        logger.info("room closed", ["room": roomID, "reason": "ttl"])
    }

    /// After a failed commit, re-reads these rooms' members from the database so memory matches what is stored.
    func reload(_ roomIDs: Set<String>) {
        loop.assertInLoop()
        guard !roomIDs.isEmpty else { return }
        do {
            try database.read { db in
                for roomID in roomIDs {
                    guard let stored = try RoomQueries.room(id: roomID, in: db), stored.closedAt == nil else {
                        rooms[roomID] = nil
                        continue
                    }
                    let previous = rooms[roomID]
                    let room = LiveRoom(record: stored, emptySince: stored.memberCount == 0 ? Timestamp.nowMilliseconds() : nil)
                    room.createdFrom = previous?.createdFrom
                    room.lastJoinedAt = try RoomQueries.lastJoinedAt(roomID: roomID, in: db)
                    let members = try RoomQueries.members(roomID: roomID, state: .joined, descending: false,
                                                          pageSize: 100_000, cursor: nil, in: db)
                    for record in members.items {
                        var member = LiveMember(id: record.memberID, user: record.user, joinedAt: record.joinedAt,
                                                audioEnabled: record.audioEnabled, audioMuted: record.audioMuted)
                        member.dropTimer = previous?.member(record.memberID)?.dropTimer
                        member.disconnectedAt = previous?.member(record.memberID)?.disconnectedAt
                        room.add(member)
                        for handle in previous?.connections(of: record.user.id) ?? [] { room.attach(handle, user: record.user.id) }
                    }
                    rooms[roomID] = room
                }
            }
        } catch {
            logger.error("could not reload rooms after a failed write", ["error": "\(error)"])
        }
    }
}

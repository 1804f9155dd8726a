import ParlorProtocol
import ParlorStore

extension RoomsService {
    /// The open room `cid`, or the error that says why it cannot be used.
    func openRoom(_ cid: String, db: SQLiteConnection) throws -> LiveRoom {
        loop.assertInLoop()
        if let room = rooms[cid] { return room }
        if let stored = try RoomQueries.room(id: cid, in: db), stored.closedAt != nil { throw RoomError.closed(cid) }
        throw RoomError.notFound(cid)
    }

    func join(_ cid: String, tid: JSONValue, client: ClientRef, db: SQLiteConnection, batch: inout Batch) throws {
        loop.assertInLoop()
        let room = try openRoom(cid, db: db)
        batch.touchedRooms.insert(cid)
        if let existing = room.member(forUser: client.user.id) {
            // Idempotent: the same member back, no second member:joined. A member waiting out its grace period is back.
            if existing.disconnectedAt != nil { try markPresent(existing.id, in: room, db: db) }
            attach(client, to: room)
            batch.reply(to: client, .conversationJoin, tid: tid, body: joinReply(room, memberID: existing.id))
            return
        }
        let cap = min(room.maxMembers ?? Int64.max, Int64(configuration.maxMembersPerRoom))
        if room.memberCount >= Int(cap) { throw RoomError.full(cid, cap) }

        let now = max(Timestamp.nowMilliseconds(), room.lastJoinedAt + 1)
        room.lastJoinedAt = now
        let member = LiveMember(id: Identifier.make(Identifier.member), user: client.user, joinedAt: now)
        try db.run("INSERT INTO members (id, room_id, user_id, state, joined_at) VALUES (?, ?, ?, 'JOINED', ?)",
                   [.text(member.id), .text(cid), .text(client.user.id), .integer(now)])
        let event = try appendEvent(to: room, type: EventType.memberJoined.rawValue, from: member.id,
                                    body: ["member_id": .string(member.id), "user": client.user.json], at: now, db: db)
        if room.emptySince != nil {
            try db.run("UPDATE rooms SET empty_since = NULL WHERE id = ?", [.text(cid)])
        }
        room.add(member)
        room.emptySince = nil
        if let timer = room.ttlTimer { loop.cancelTimer(timer); room.ttlTimer = nil }
        attach(client, to: room)
        batch.reply(to: client, .conversationJoin, tid: tid, body: joinReply(room, memberID: member.id))
        broadcast(event, in: room, batch: &batch)
        batch.notices.append(.memberJoined(room: room.summary, member: member.summary, eventID: event.id))
    }

    private func joinReply(_ room: LiveRoom, memberID: String) -> JSONValue {
        loop.assertInLoop()
        return [
            "member_id": .string(memberID), "cid": .string(room.id),
            "members": .array(room.sortedMembers.map(\.record.json)),
            "last_event_id": JSONValue(room.lastEventID),
        ]
    }

    func leave(_ cid: String, tid: JSONValue, client: ClientRef, db: SQLiteConnection, batch: inout Batch) throws {
        loop.assertInLoop()
        let room = try openRoom(cid, db: db)
        guard let member = room.member(forUser: client.user.id) else { throw RoomError.notJoined(cid) }
        batch.touchedRooms.insert(cid)
        batch.reply(to: client, .conversationLeave, tid: tid, body: .object([:]))
        try end(member, in: room, reason: .left, db: db, batch: &batch)
    }

    /// Ends a membership: LEFT in the database, member:left to everyone attached (the member's own connections
    /// included), then those connections stop receiving the room.
    func end(_ member: LiveMember, in room: LiveRoom, reason: LeaveReason, db: SQLiteConnection, batch: inout Batch) throws {
        loop.assertInLoop()
        let now = Timestamp.nowMilliseconds()
        try db.run("""
            UPDATE members SET state = 'LEFT', left_at = ?, left_reason = ?, disconnected_at = NULL
            WHERE id = ? AND state = 'JOINED'
            """, [.integer(now), .text(reason.rawValue), .text(member.id)])
        let event = try appendEvent(to: room, type: EventType.memberLeft.rawValue, from: member.id,
                                    body: ["member_id": .string(member.id), "user": member.user.json, "reason": .string(reason.rawValue)],
                                    at: now, db: db)
        let becameEmpty = room.memberCount == 1
        if becameEmpty { try db.run("UPDATE rooms SET empty_since = ? WHERE id = ?", [.integer(now), .text(room.id)]) }

        broadcast(event, in: room, batch: &batch)
        batch.notices.append(.memberLeft(room: room.summary, member: member.summary, reason: reason, eventID: event.id))
        if let timer = member.dropTimer { loop.cancelTimer(timer) }
        room.remove(member.id)
        for handle in room.detachAll(user: member.user.id) { clients[handle]?.rooms.remove(room.id) }
        if becameEmpty {
            room.emptySince = now
            scheduleExpiry(of: room)
        }
    }

    /// Stores the next event of a room (its sequence number is the room's last plus one) and returns it.
    func appendEvent(to room: LiveRoom, type: String, from: String?, body: JSONValue, at now: Int64,
                     db: SQLiteConnection) throws -> EventRecord {
        loop.assertInLoop()
        let id = room.lastEventID + 1
        try db.run("INSERT INTO events (room_id, seq, type, from_member, body, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                   [.text(room.id), .integer(id), .text(type), SQLValue(from), .text(body.encodedString()), .integer(now)])
        try db.run("UPDATE rooms SET last_event_id = ? WHERE id = ?", [.integer(id), .text(room.id)])
        room.lastEventID = id
        return EventRecord(roomID: room.id, id: id, type: type, from: from, body: body, createdAt: now)
    }

    /// Queues one encoding of the event to every connection attached to the room.
    func broadcast(_ event: EventRecord, in room: LiveRoom, batch: inout Batch) {
        loop.assertInLoop()
        let frame = ProtocolFrame.event(event)
        for handle in room.allConnections { batch.outbox.sendEvent(frame, to: handle) }
    }

    func attach(_ client: ClientRef, to room: LiveRoom) {
        loop.assertInLoop()
        room.attach(client.handle, user: client.user.id)
        clients[client.handle, default: ClientState(ref: client)].rooms.insert(room.id)
    }
}

import ParlorProtocol
import ParlorLoop
import ParlorStore

extension RoomsService {
    /// Records the session and greets the connection with session:success.
    func openSession(_ client: ClientRef, db: SQLiteConnection, batch: inout Batch) throws {
        loop.assertInLoop()
        try db.run("INSERT INTO sessions (id, user_id, created_at) VALUES (?, ?, ?)",
                   [.text(client.sessionID), .text(client.user.id), .integer(Timestamp.nowMilliseconds())])
        clients[client.handle] = ClientState(ref: client)
        liveUsers.connectionOpened(client.user.id)
        let body: JSONValue = [
            "session_id": .string(client.sessionID), "user": client.user.json,
            "ice_servers": configuration.iceServersJSON(for: client.user.id), "max_audio_senders": JSONValue(configuration.maxAudioSenders),
        ]
        batch.send(ProtocolFrame.event(.sessionSuccess, ["body": body]), to: client)
        batch.greeted.append(client)
    }

    /// A connection closed without leaving: each of its rooms where the user has no other connection starts the
    /// grace period; the member drops only if no connection of the user is back when it ends.
    func clientDisconnected(_ client: ClientRef, db: SQLiteConnection, batch: inout Batch) throws {
        loop.assertInLoop()
        guard let state = clients.removeValue(forKey: client.handle) else { return }
        for roomID in state.watching { rooms[roomID]?.unwatch(client.handle) }
        liveUsers.connectionClosed(client.user.id)
        let now = Timestamp.nowMilliseconds()
        try endSession(client.sessionID, at: now, db: db)
        for roomID in state.rooms {
            guard let room = rooms[roomID], let member = room.member(forUser: client.user.id) else { continue }
            if room.detach(client.handle, user: client.user.id) { continue }
            try db.run("UPDATE members SET disconnected_at = ? WHERE id = ?", [.integer(now), .text(member.id)])
            batch.touchedRooms.insert(roomID)
            room.update(member.id) { $0.disconnectedAt = now }
            scheduleDrop(member.id, in: room, after: configuration.gracePeriod)
        }
    }

    func scheduleDrop(_ memberID: String, in room: LiveRoom, after delay: TimeSpan) {
        loop.assertInLoop()
        if let old = room.member(memberID)?.dropTimer { loop.cancelTimer(old) }
        let roomID = room.id
        let timer = loop.schedule(after: delay) { [weak self] in
            self?.submit(.dropIfStillAway(roomID: roomID, memberID: memberID))
        }
        room.update(memberID) { $0.dropTimer = timer }
    }

    /// Clears a member's grace period: one of the user's connections is attached again.
    func markPresent(_ memberID: String, in room: LiveRoom, db: SQLiteConnection) throws {
        loop.assertInLoop()
        try db.run("UPDATE members SET disconnected_at = NULL WHERE id = ?", [.text(memberID)])
        if let timer = room.member(memberID)?.dropTimer { loop.cancelTimer(timer) }
        room.update(memberID) {
            $0.disconnectedAt = nil
            $0.dropTimer = nil
        }
    }

    func dropIfStillAway(roomID: String, memberID: String, db: SQLiteConnection, batch: inout Batch) throws {
        loop.assertInLoop()
        guard let room = rooms[roomID], var member = room.member(memberID), member.disconnectedAt != nil,
              room.connections(of: member.user.id).isEmpty else { return }
        member.dropTimer = nil
        batch.touchedRooms.insert(roomID)
        try end(member, in: room, reason: .dropped, db: db, batch: &batch)
    }

    /// session:resume: re-attaches the rooms where the user is still a member (no event: nobody saw them leave),
    /// then replays what the client missed, in order. Rooms where the membership ended are listed as `lost`.
    func resume(_ sessionID: String, lastEventIDs: [(cid: String, lastEventID: Int64)], tid: JSONValue, client: ClientRef,
                db: SQLiteConnection, batch: inout Batch) throws {
        loop.assertInLoop()
        guard let owner = try db.queryOne("SELECT user_id FROM sessions WHERE id = ?", [.text(sessionID)]),
              owner.string("user_id") == client.user.id else { throw RoomError.sessionNotFound }
        var resumed: [JSONValue] = []
        var lost: [JSONValue] = []
        var replay: [[UInt8]] = []
        for (cid, lastEventID) in lastEventIDs {
            guard let room = rooms[cid], let member = room.member(forUser: client.user.id) else {
                lost.append(.string(cid))
                continue
            }
            let missed = try RoomQueries.events(roomID: cid, since: lastEventID, pageSize: configuration.maxReplayEvents, in: db)
            if missed.next != nil {
                // Too far behind to replay: the client must rejoin and read the member list afresh.
                lost.append(.string(cid))
                continue
            }
            if member.disconnectedAt != nil { try markPresent(member.id, in: room, db: db) }
            batch.touchedRooms.insert(cid)
            attach(client, to: room)
            resumed.append(["cid": .string(cid), "member_id": .string(member.id), "last_event_id": JSONValue(room.lastEventID)])
            replay += missed.items.map(ProtocolFrame.event)
        }
        batch.reply(to: client, .sessionResume, tid: tid,
                    body: ["session_id": .string(client.sessionID), "resumed": .array(resumed), "lost": .array(lost),
                           "ice_servers": configuration.iceServersJSON(for: client.user.id)])
        for frame in replay { batch.sendPacedEvent(frame, to: client) }  // up to maxReplayEvents a room: paced
    }

    /// At start: load open rooms, give every JOINED member a fresh grace period, and arm room expiry.
    func recover() throws -> Int {
        loop.assertInLoop()
        let now = Timestamp.nowMilliseconds()
        var recoveredMembers = 0
        try database.write { db in
            recoveredMembers = try db.run("UPDATE members SET disconnected_at = ? WHERE state = 'JOINED'", [.integer(now)])
            try endSessionsOfAPreviousRun(at: now, db: db)
            try limitStoredRooms(now: now, db: db)
            let openRooms = try db.query("SELECT \(RoomQueries.roomColumns), r.empty_since, r.created_from FROM rooms r WHERE r.closed_at IS NULL")
            for row in openRooms {
                let record = RoomQueries.room(from: row)
                let room = LiveRoom(record: record, emptySince: row.int("empty_since") ?? (record.memberCount == 0 ? record.createdAt : nil))
                room.createdFrom = row.string("created_from")
                rooms[room.id] = room
            }
            lastRoomCreatedAt = try db.queryOne("SELECT MAX(created_at) AS latest FROM rooms")?.int("latest") ?? 0
            for row in try db.query("SELECT room_id, MAX(joined_at) AS latest FROM members GROUP BY room_id") {
                rooms[row.string("room_id") ?? ""]?.lastJoinedAt = row.int("latest") ?? 0
            }
            let members = try db.query("""
                SELECT \(RoomQueries.memberColumns), m.room_id FROM members m JOIN users u ON u.id = m.user_id
                WHERE m.state = 'JOINED'
                """)
            for row in members {
                guard let room = rooms[row.string("room_id") ?? ""] else { continue }
                let record = RoomQueries.member(from: row)
                room.add(LiveMember(id: record.memberID, user: record.user, joinedAt: record.joinedAt,
                                    audioEnabled: record.audioEnabled, audioMuted: record.audioMuted, disconnectedAt: now))
            }
        }
        for room in rooms.values {
            for member in room.sortedMembers { scheduleDrop(member.id, in: room, after: configuration.gracePeriod) }
            if room.memberCount == 0 { scheduleExpiry(of: room) }
        }
        return recoveredMembers
    }
}

import ParlorProtocol
import ParlorRooms
import ParlorStore

// Rooms: their rows, the open-rooms page, and what the rooms thread loads at start.
extension SQLiteRoomReading {
    static var roomColumns: String {
        """
        r.id, r.name, r.display_name, r.created_by, r.created_at, r.closed_at, r.ttl, r.max_members, r.mode, r.locked,
        (SELECT COALESCE(MAX(e.seq), 0) FROM events e WHERE e.room_id = r.id) AS last_event_id,
        (SELECT COUNT(*) FROM members m INDEXED BY members_one_joined WHERE m.room_id = r.id AND m.state = 'JOINED') AS member_count
        """
    }


    func room(id: String) throws -> RoomRecord? {
        try db.queryOne("SELECT \(Self.roomColumns) FROM rooms r WHERE r.id = ?", [.text(id)]).map(\.roomRecord)
    }

    func openRooms(pageSize: Int, cursor: PageCursor?) throws -> Page<RoomRecord> {
        var sql = "SELECT \(Self.roomColumns) FROM rooms r WHERE r.closed_at IS NULL"
        var params: [SQLValue] = []
        if let cursor {
            sql += " AND (r.created_at, r.id) < (?, ?)"
            params += [.integer(cursor.number), .text(cursor.id)]
        }
        sql += " ORDER BY r.created_at DESC, r.id DESC LIMIT ?"
        params.append(.integer(Int64(pageSize + 1)))
        let rooms = try db.query(sql, params).map(\.roomRecord)
        return Page(items: rooms, pageSize: pageSize) { PageCursor(number: $0.createdAt, id: $0.id) }
    }

    func openRoomState(id: String) throws -> StoredRoom? {
        guard let row = try db.queryOne("SELECT \(Self.roomColumns), r.empty_since, r.created_from FROM rooms r WHERE r.id = ?",
                                        [.text(id)]),
              row.int("closed_at") == nil else { return nil }
        let members = try self.members(roomID: id, state: .joined, descending: false, pageSize: 100_000, cursor: nil).items
        return row.storedRoom(lastJoinedAt: try lastJoinedAt(roomID: id), members: members)
    }

    private func lastJoinedAt(roomID: String) throws -> Int64 {
        try db.queryOne("SELECT MAX(joined_at) AS latest FROM members WHERE room_id = ?", [.text(roomID)])?.int("latest") ?? 0
    }
}

extension SQLiteRoomTransaction {
    func createRoom(_ room: RoomRecord, createdFrom: String?) throws {
        do {
            try db.run("""
                INSERT INTO rooms (id, name, display_name, created_by, created_at, ttl, max_members, empty_since, created_from, mode)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [.text(room.id), .text(room.name), .text(room.displayName), SQLValue(room.createdBy), .integer(room.createdAt),
                      .integer(room.ttl), SQLValue(room.maxMembers), .integer(room.createdAt), SQLValue(createdFrom),
                      .text(room.mode.rawValue)])
        } catch let error as StoreError where error.isUniqueViolation {
            throw RoomError.nameTaken(room.name)
        }
    }

    func closeRoom(id: String, at time: Int64) throws {
        try db.run("UPDATE rooms SET closed_at = ? WHERE id = ? AND closed_at IS NULL", [.integer(time), .text(id)])
    }

    func setRoomEmpty(id: String, since time: Int64?) throws {
        try db.run("UPDATE rooms SET empty_since = ? WHERE id = ?", [SQLValue(time), .text(id)])
    }

    func limitOpenRoomTTLs(to maxTTL: Int64) throws -> Int {
        try db.run("UPDATE rooms SET ttl = ? WHERE closed_at IS NULL AND ttl > ?", [.integer(maxTTL), .integer(maxTTL)])
    }

    func openRoomStates() throws -> [StoredRoom] {
        var lastJoinedAt: [String: Int64] = [:]
        for row in try db.query("SELECT room_id, MAX(joined_at) AS latest FROM members GROUP BY room_id") {
            lastJoinedAt[row.string("room_id") ?? ""] = row.int("latest") ?? 0
        }
        var members: [String: [MemberRecord]] = [:]
        let memberRows = try db.query("""
            SELECT \(Self.memberColumns), m.room_id FROM \(Self.memberTables)
            WHERE m.state = 'JOINED' ORDER BY m.joined_at, m.id
            """)
        for row in memberRows { members[row.string("room_id") ?? "", default: []].append(row.memberRecord) }
        return try db.query("SELECT \(Self.roomColumns), r.empty_since, r.created_from FROM rooms r WHERE r.closed_at IS NULL").map { row in
            let id = row.string("id") ?? ""
            return row.storedRoom(lastJoinedAt: lastJoinedAt[id] ?? 0, members: members[id] ?? [])
        }
    }

    func latestRoomCreatedAt() throws -> Int64 {
        try db.queryOne("SELECT MAX(created_at) AS latest FROM rooms")?.int("latest") ?? 0
    }
}

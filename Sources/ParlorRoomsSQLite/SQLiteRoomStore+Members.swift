import ParlorProtocol
import ParlorRooms
import ParlorStore

// Memberships: JOINED → (disconnected within the grace period) → LEFT with a reason, and their media state.
extension SQLiteRoomReading {
    static var memberColumns: String {
        """
        m.id, m.user_id, COALESCE(u.display_name, u.name) AS user_name, m.state, m.joined_at, m.left_at, m.audio_enabled, m.audio_muted,
        COALESCE(ru.role, 'speaker') AS role, ru.hand_raised_at
        """
    }

    /// Members with their user and their role in the room (`memberColumns` reads both).
    static var memberTables: String {
        "members m JOIN users u ON u.id = m.user_id LEFT JOIN room_users ru ON ru.room_id = m.room_id AND ru.user_id = m.user_id"
    }

    /// `memberTables` for a query of JOINED members only (its WHERE must say `m.state = 'JOINED'`).
    static var joinedMemberTables: String {
        "members m INDEXED BY members_one_joined JOIN users u ON u.id = m.user_id "
            + "LEFT JOIN room_users ru ON ru.room_id = m.room_id AND ru.user_id = m.user_id"
    }


    /// The JOINED members come through the partial index members_one_joined (JOINED rows only, sorted after), named
    /// with INDEXED BY: without statistics SQLite would pick members_by_room for its order and walk the room's whole
    /// history (migration 007). A partial index needs the state as a literal in the query, not a parameter.
    func members(roomID: String, state: MemberState?, descending: Bool, pageSize: Int, cursor: PageCursor?) throws -> Page<MemberRecord> {
        var sql: String
        switch state {
        case .joined: sql = "SELECT \(Self.memberColumns) FROM \(Self.joinedMemberTables) WHERE m.room_id = ? AND m.state = 'JOINED'"
        case .left: sql = "SELECT \(Self.memberColumns) FROM \(Self.memberTables) WHERE m.room_id = ? AND m.state = 'LEFT'"
        case nil: sql = "SELECT \(Self.memberColumns) FROM \(Self.memberTables) WHERE m.room_id = ?"
        }
        var params: [SQLValue] = [.text(roomID)]
        if let cursor {
            sql += descending ? " AND (m.joined_at, m.id) < (?, ?)" : " AND (m.joined_at, m.id) > (?, ?)"
            params += [.integer(cursor.number), .text(cursor.id)]
        }
        sql += descending ? " ORDER BY m.joined_at DESC, m.id DESC" : " ORDER BY m.joined_at, m.id"
        sql += " LIMIT ?"
        params.append(.integer(Int64(pageSize + 1)))
        let members = try db.query(sql, params).map(\.memberRecord)
        return Page(items: members, pageSize: pageSize) { PageCursor(number: $0.joinedAt, id: $0.memberID) }
    }

    func hasMembership(userID: String, roomID: String) throws -> Bool {
        try db.queryOne("SELECT 1 AS found FROM members WHERE room_id = ? AND user_id = ? LIMIT 1", [.text(roomID), .text(userID)]) != nil
    }
}

extension SQLiteRoomTransaction {
    func addMember(id: String, roomID: String, userID: String, joinedAt: Int64) throws {
        try db.run("INSERT INTO members (id, room_id, user_id, state, joined_at) VALUES (?, ?, ?, 'JOINED', ?)",
                   [.text(id), .text(roomID), .text(userID), .integer(joinedAt)])
    }

    func endMembership(memberID: String, reason: LeaveReason, at time: Int64) throws {
        try db.run("""
            UPDATE members SET state = 'LEFT', left_at = ?, left_reason = ?, disconnected_at = NULL
            WHERE id = ? AND state = 'JOINED'
            """, [.integer(time), .text(reason.rawValue), .text(memberID)])
    }

    func setDisconnected(memberID: String, since time: Int64?) throws {
        try db.run("UPDATE members SET disconnected_at = ? WHERE id = ?", [SQLValue(time), .text(memberID)])
    }

    func setMedia(memberID: String, audioEnabled: Bool, audioMuted: Bool) throws {
        try db.run("UPDATE members SET audio_enabled = ?, audio_muted = ? WHERE id = ?",
                   [.integer(audioEnabled ? 1 : 0), .integer(audioMuted ? 1 : 0), .text(memberID)])
    }

    func markPreviousRunAway(at time: Int64) throws -> Int {
        let members = try db.run("UPDATE members SET disconnected_at = ? WHERE state = 'JOINED'", [.integer(time)])
        try db.run("UPDATE sessions SET ended_at = ? WHERE ended_at IS NULL", [.integer(time)])
        return members
    }
}

import ParlorProtocol
import ParlorRooms
import ParlorStore

// Stage rooms: the lock, each user's role and hand (kept for the room's life), and bans.
extension SQLiteRoomReading {
    func raisedHands(roomID: String, pageSize: Int, cursor: PageCursor?) throws -> Page<MemberRecord> {
        var sql = """
            SELECT \(Self.memberColumns) FROM \(Self.joinedMemberTables)
            WHERE m.room_id = ? AND m.state = 'JOINED' AND ru.hand_raised_at IS NOT NULL
            """
        var params: [SQLValue] = [.text(roomID)]
        if let cursor {
            sql += " AND (ru.hand_raised_at, m.id) > (?, ?)"
            params += [.integer(cursor.number), .text(cursor.id)]
        }
        sql += " ORDER BY ru.hand_raised_at, m.id LIMIT ?"
        params.append(.integer(Int64(pageSize + 1)))
        let members = try db.query(sql, params).map(\.memberRecord)
        return Page(items: members, pageSize: pageSize) { PageCursor(number: $0.handRaisedAt ?? 0, id: $0.memberID) }
    }

    func stage(roomID: String, at time: Int64) throws -> RoomStage {
        var stage = RoomStage()
        for row in try db.query("SELECT user_id, role, hand_raised_at FROM room_users WHERE room_id = ?", [.text(roomID)]) {
            stage.roles[row.string("user_id") ?? ""] = (MemberRole(rawValue: row.string("role") ?? "") ?? .speaker, row.int("hand_raised_at"))
        }
        let bans = try db.query("SELECT user_id, client_address, until FROM room_bans WHERE room_id = ? AND until > ?",
                                [.text(roomID), .integer(time)])
        for row in bans {
            let ban = RoomBan(userID: row.string("user_id") ?? "", storedAddresses: row.string("client_address"), until: row.int("until") ?? 0)
            stage.bans[ban.userID] = ban
        }
        return stage
    }
}

extension SQLiteRoomTransaction {
    func setLocked(roomID: String, _ locked: Bool) throws {
        try db.run("UPDATE rooms SET locked = ? WHERE id = ?", [.integer(locked ? 1 : 0), .text(roomID)])
    }

    func setRole(roomID: String, userID: String, _ role: MemberRole) throws {
        try db.run("""
            INSERT INTO room_users (room_id, user_id, role) VALUES (?, ?, ?)
            ON CONFLICT (room_id, user_id) DO UPDATE SET role = excluded.role
            """, [.text(roomID), .text(userID), .text(role.rawValue)])
    }

    /// A user without a row is a speaker: the row it gets here says so.
    func setHand(roomID: String, userID: String, raisedAt time: Int64?) throws {
        try db.run("""
            INSERT INTO room_users (room_id, user_id, role, hand_raised_at) VALUES (?, ?, 'speaker', ?)
            ON CONFLICT (room_id, user_id) DO UPDATE SET hand_raised_at = excluded.hand_raised_at
            """, [.text(roomID), .text(userID), SQLValue(time)])
    }

    func ban(_ ban: RoomBan, roomID: String) throws {
        try db.run("""
            INSERT INTO room_bans (room_id, user_id, client_address, until) VALUES (?, ?, ?, ?)
            ON CONFLICT (room_id, user_id) DO UPDATE SET client_address = excluded.client_address, until = excluded.until
            """, [.text(roomID), .text(ban.userID), SQLValue(ban.storedAddresses), .integer(ban.until)])
    }
}

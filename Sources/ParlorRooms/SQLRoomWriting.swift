import ParlorProtocol
import ParlorStore

/// The room stores' writes that are the same SQL in both dialects, beside `SQLRoomReading`'s reads. What differs stays
/// with each dialect's transaction: creating and closing rooms, events, sessions and memberships (PostgreSQL records
/// the node holding them and tells the other nodes).
public protocol SQLRoomWriting: SQLRoomReading, RoomTransaction {}

extension SQLRoomWriting {
    /// A command's changes, undone alone if it throws: the batch around it goes on. In PostgreSQL a failed statement
    /// aborts the transaction until this rollback. Cached statements (`run`), not scripts: every command opens and
    /// releases one.
    public func withSavepoint<T>(_ body: () throws -> T) throws -> T {
        try db.run("SAVEPOINT command", [])
        do {
            let result = try body()
            try db.run("RELEASE SAVEPOINT command", [])
            return result
        } catch {
            // Throws in turn if the database already ended the whole transaction (a lost connection, a full disk).
            try db.run("ROLLBACK TO SAVEPOINT command", [])
            try db.run("RELEASE SAVEPOINT command", [])
            throw error
        }
    }

    public func setRoomEmpty(id: String, since time: Int64?) throws {
        try db.run("UPDATE rooms SET empty_since = $1 WHERE id = $2", [SQLValue(time), .text(id)])
    }

    public func limitOpenRoomTTLs(to maxTTL: Int64) throws -> Int {
        try db.run("UPDATE rooms SET ttl = $1 WHERE closed_at IS NULL AND ttl > $1", [.integer(maxTTL)])
    }

    public func openRoomStates() throws -> [StoredRoom] {
        var lastJoinedAt: [String: Int64] = [:]
        for row in try db.query("SELECT room_id, MAX(joined_at) AS latest FROM members GROUP BY room_id", []) {
            lastJoinedAt[row.string("room_id") ?? ""] = row.int("latest") ?? 0
        }
        var members: [String: [MemberRecord]] = [:]
        let memberRows = try db.query("""
            SELECT \(Self.memberColumns), m.room_id FROM \(Self.memberTables)
            WHERE m.state = 'JOINED' ORDER BY m.joined_at, m.id
            """, [])
        for row in memberRows { members[row.string("room_id") ?? "", default: []].append(row.memberRecord) }
        let rooms = try db.query("SELECT \(Self.roomColumns), r.empty_since, r.created_from FROM rooms r WHERE r.closed_at IS NULL", [])
        return rooms.map { row in
            let id = row.string("id") ?? ""
            return row.storedRoom(lastJoinedAt: lastJoinedAt[id] ?? 0, members: members[id] ?? [])
        }
    }

    public func latestRoomCreatedAt() throws -> Int64 {
        try db.queryOne("SELECT MAX(created_at) AS latest FROM rooms", [])?.int("latest") ?? 0
    }

    /// Flags bind as 1 and 0: SQLite stores them so, and PostgreSQL reads them into its boolean columns.
    public func setStreamPublic(roomID: String, _ isPublic: Bool) throws {
        try db.run("UPDATE rooms SET stream_public = $1 WHERE id = $2", [SQLValue(isPublic), .text(roomID)])
    }

    public func setLocked(roomID: String, _ locked: Bool) throws {
        try db.run("UPDATE rooms SET locked = $1 WHERE id = $2", [SQLValue(locked), .text(roomID)])
    }

    public func setMedia(memberID: String, audioEnabled: Bool, audioMuted: Bool) throws {
        try db.run("UPDATE members SET audio_enabled = $1, audio_muted = $2 WHERE id = $3",
                   [SQLValue(audioEnabled), SQLValue(audioMuted), .text(memberID)])
    }

    public func setRole(roomID: String, userID: String, _ role: MemberRole) throws {
        try db.run("""
            INSERT INTO room_users (room_id, user_id, role) VALUES ($1, $2, $3)
            ON CONFLICT (room_id, user_id) DO UPDATE SET role = excluded.role
            """, [.text(roomID), .text(userID), .text(role.rawValue)])
    }

    /// A user without a row is a speaker: the row it gets here says so.
    public func setHand(roomID: String, userID: String, raisedAt time: Int64?) throws {
        try db.run("""
            INSERT INTO room_users (room_id, user_id, role, hand_raised_at) VALUES ($1, $2, 'speaker', $3)
            ON CONFLICT (room_id, user_id) DO UPDATE SET hand_raised_at = excluded.hand_raised_at
            """, [.text(roomID), .text(userID), SQLValue(time)])
    }

    public func ban(_ ban: RoomBan, roomID: String) throws {
        try db.run("""
            INSERT INTO room_bans (room_id, user_id, client_address, until) VALUES ($1, $2, $3, $4)
            ON CONFLICT (room_id, user_id) DO UPDATE SET client_address = excluded.client_address, until = excluded.until
            """, [.text(roomID), .text(ban.userID), SQLValue(ban.storedAddresses), .integer(ban.until)])
    }

    /// Every JOINED membership is this process's: SQLite's one node, or a PostgreSQL store without a `ClusterLink`
    /// (the rooms tests' harness). Nodes that share a database use leases instead (`ClusterTransaction.takeOverExpiredNodes`).
    public func markPreviousRunAway(at time: Int64) throws -> Int {
        let members = try db.run("UPDATE members SET disconnected_at = $1 WHERE state = 'JOINED'", [.integer(time)])
        try db.run("UPDATE sessions SET ended_at = $1 WHERE ended_at IS NULL", [.integer(time)])
        return members
    }

    /// Test mode's reset.
    public func deleteEverything() throws {
        try db.execute("DELETE FROM recordings; DELETE FROM events; DELETE FROM room_users; DELETE FROM room_bans; DELETE FROM members; DELETE FROM rooms; DELETE FROM sessions; DELETE FROM users;")
    }
}

extension SQLRoomWriting {
    /// A new room's row; each dialect says how a taken name is refused (SQLite's constraint error, PostgreSQL's
    /// `ON CONFLICT`, since a failed statement would abort its whole transaction).
    public static var insertRoom: String {
        """
        INSERT INTO rooms (id, name, display_name, created_by, created_at, ttl, max_members, empty_since, created_from, mode, e2ee)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
        """
    }

    /// `insertRoom`'s parameters: a new room is empty from its creation.
    public static func insertRoomParameters(_ room: RoomRecord, createdFrom: String?) -> [SQLValue] {
        [.text(room.id), .text(room.name), .text(room.displayName), SQLValue(room.createdBy), .integer(room.createdAt),
         .integer(room.ttl), SQLValue(room.maxMembers), .integer(room.createdAt), SQLValue(createdFrom), .text(room.mode.rawValue),
         SQLValue(room.e2ee)]
    }
}

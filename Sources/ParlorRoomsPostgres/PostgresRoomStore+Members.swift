import ParlorPostgres
import ParlorRooms
import ParlorStore

// Memberships: JOINED → (disconnected within the grace period) → LEFT with a reason, and their media state.
extension PostgresRoomReading {
    static var memberColumns: String {
        """
        m.id, m.user_id, COALESCE(u.display_name, u.name) AS user_name, m.state, m.joined_at, m.left_at, m.audio_enabled, m.audio_muted,
        COALESCE(ru.role, 'speaker') AS role, ru.hand_raised_at
        """
    }

    static var memberTables: String {
        "members m JOIN users u ON u.id = m.user_id LEFT JOIN room_users ru ON ru.room_id = m.room_id AND ru.user_id = m.user_id"
    }

    func members(roomID: String, state: MemberState?, descending: Bool, pageSize: Int, cursor: PageCursor?) throws -> Page<MemberRecord> {
        var sql = "SELECT \(Self.memberColumns) FROM \(Self.memberTables) WHERE m.room_id = $1"
        var params: [SQLValue] = [.text(roomID)]
        if let state {
            params.append(.text(state.rawValue))
            sql += " AND m.state = $\(params.count)"
        }
        if let cursor {
            params += [.integer(cursor.number), .text(cursor.id)]
            let comparison = descending ? "<" : ">"
            sql += " AND (m.joined_at, m.id) \(comparison) ($\(params.count - 1), $\(params.count))"
        }
        sql += descending ? " ORDER BY m.joined_at DESC, m.id DESC" : " ORDER BY m.joined_at, m.id"
        params.append(.integer(Int64(pageSize + 1)))
        sql += " LIMIT $\(params.count)"
        let members = try db.query(sql, params).map(\.memberRecord)
        return Page(items: members, pageSize: pageSize) { PageCursor(number: $0.joinedAt, id: $0.memberID) }
    }

    func hasMembership(userID: String, roomID: String) throws -> Bool {
        try db.queryOne("SELECT 1 AS found FROM members WHERE room_id = $1 AND user_id = $2 LIMIT 1", [.text(roomID), .text(userID)]) != nil
    }
}

extension PostgresRoomTransaction {
    func addMember(id: String, roomID: String, userID: String, joinedAt: Int64) throws {
        try db.run("INSERT INTO members (id, room_id, user_id, state, joined_at, node_id) VALUES ($1, $2, $3, 'JOINED', $4, $5)",
                   [.text(id), .text(roomID), .text(userID), .integer(joinedAt), .text(nodeID)])
    }

    func endMembership(memberID: String, reason: LeaveReason, at time: Int64) throws {
        try db.run("""
            UPDATE members SET state = 'LEFT', left_at = $1, left_reason = $2, disconnected_at = NULL
            WHERE id = $3 AND state = 'JOINED'
            """, [.integer(time), .text(reason.rawValue), .text(memberID)])
        try db.run("DELETE FROM member_attachments WHERE member_id = $1", [.text(memberID)])
    }

    /// Present again: this node holds the member from now on. Away: only if this node (or none) holds it, so a
    /// connection closing here does not start the grace period of a member resumed on another node.
    func setDisconnected(memberID: String, since time: Int64?) throws {
        guard let time else {
            try db.run("UPDATE members SET disconnected_at = NULL, node_id = $2 WHERE id = $1", [.text(memberID), .text(nodeID)])
            return
        }
        try db.run("UPDATE members SET disconnected_at = $1 WHERE id = $2 AND (node_id IS NULL OR node_id = $3)",
                   [.integer(time), .text(memberID), .text(nodeID)])
    }

    func setMedia(memberID: String, audioEnabled: Bool, audioMuted: Bool) throws {
        try db.run("UPDATE members SET audio_enabled = $1, audio_muted = $2 WHERE id = $3",
                   [.text(audioEnabled ? "true" : "false"), .text(audioMuted ? "true" : "false"), .text(memberID)])
    }

    /// A store without a `ClusterLink` (the rooms tests' harness): every JOINED membership is this process's.
    /// Nodes that share the database use leases instead (`ClusterTransaction.takeOverExpiredNodes`).
    func markPreviousRunAway(at time: Int64) throws -> Int {
        let members = try db.run("UPDATE members SET disconnected_at = $1 WHERE state = 'JOINED'", [.integer(time)])
        try db.run("UPDATE sessions SET ended_at = $1 WHERE ended_at IS NULL", [.integer(time)])
        return members
    }
}

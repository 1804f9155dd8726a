import ParlorProtocol
import ParlorStore

/// The room stores' reads that are the same SQL in both dialects (ParlorRoomsSQLite, ParlorRoomsPostgres), written
/// once over `SQLConnection` with `$n` parameters. A dialect supplies what differs: how a room row gets its
/// `last_event_id` and `member_count`, and the tables JOINED members are read through.
public protocol SQLRoomReading: RoomReader {
    associatedtype Connection: SQLConnection
    var db: Connection { get }
    /// A rooms row (`FROM rooms r`) with `last_event_id` and `member_count`, as `Row.roomRecord` reads it.
    static var roomColumns: String { get }
    /// `memberTables` for a query whose WHERE says `m.state = 'JOINED'` (SQLite names its partial index there).
    static var joinedMemberTables: String { get }
}

extension SQLRoomReading {
    /// A member with its user and its role in the room, as `Row.memberRecord` reads it (from `memberTables`).
    public static var memberColumns: String {
        """
        m.id, m.user_id, COALESCE(u.display_name, u.name) AS user_name, m.state, m.joined_at, m.left_at, m.audio_enabled, m.audio_muted,
        COALESCE(ru.role, 'speaker') AS role, ru.hand_raised_at
        """
    }

    /// Members with their user and their role in the room (`memberColumns` reads both).
    public static var memberTables: String {
        "members m JOIN users u ON u.id = m.user_id LEFT JOIN room_users ru ON ru.room_id = m.room_id AND ru.user_id = m.user_id"
    }

    public func room(id: String) throws -> RoomRecord? {
        try db.queryOne("SELECT \(Self.roomColumns) FROM rooms r WHERE r.id = $1", [.text(id)])?.roomRecord
    }

    public func openRooms(pageSize: Int, cursor: PageCursor?) throws -> Page<RoomRecord> {
        let rooms = try keysetPage("SELECT \(Self.roomColumns) FROM rooms r WHERE r.closed_at IS NULL", [],
                                   by: "r.created_at", then: "r.id", descending: true, after: cursor, pageSize: pageSize)
            .map(\.roomRecord)
        return Page(items: rooms, pageSize: pageSize) { PageCursor(number: $0.createdAt, id: $0.id) }
    }

    /// `select`'s rows ordered by `key` then `tiebreak`, those after `cursor` (keyset pagination), one more than
    /// `pageSize` so that `Page` sees whether another page follows. `select` ends in a WHERE clause.
    func keysetPage(_ select: String, _ parameters: [SQLValue], by key: String, then tiebreak: String, descending: Bool,
                    after cursor: PageCursor?, pageSize: Int) throws -> [Row] {
        var sql = select
        var params = parameters
        if let cursor {
            sql += " AND (\(key), \(tiebreak)) \(descending ? "<" : ">") ($\(params.count + 1), $\(params.count + 2))"
            params += [.integer(cursor.number), .text(cursor.id)]
        }
        sql += descending ? " ORDER BY \(key) DESC, \(tiebreak) DESC" : " ORDER BY \(key), \(tiebreak)"
        sql += " LIMIT $\(params.count + 1)"
        params.append(.integer(Int64(pageSize + 1)))
        return try db.query(sql, params)
    }

    public func openRoomState(id: String) throws -> StoredRoom? {
        guard let row = try db.queryOne("SELECT \(Self.roomColumns), r.empty_since, r.created_from FROM rooms r WHERE r.id = $1",
                                        [.text(id)]),
              row.int("closed_at") == nil else { return nil }
        let members = try self.members(roomID: id, state: .joined, descending: false, pageSize: 100_000, cursor: nil).items
        let lastJoinedAt = try db.queryOne("SELECT MAX(joined_at) AS latest FROM members WHERE room_id = $1", [.text(id)])?.int("latest") ?? 0
        return row.storedRoom(lastJoinedAt: lastJoinedAt, members: members)
    }

    /// The state is a literal, not a parameter: SQLite uses a partial index (JOINED rows only) only for a query that
    /// names its condition (migration 007).
    public func members(roomID: String, state: MemberState?, descending: Bool, pageSize: Int, cursor: PageCursor?) throws -> Page<MemberRecord> {
        let sql: String
        switch state {
        case .joined: sql = "SELECT \(Self.memberColumns) FROM \(Self.joinedMemberTables) WHERE m.room_id = $1 AND m.state = 'JOINED'"
        case .left: sql = "SELECT \(Self.memberColumns) FROM \(Self.memberTables) WHERE m.room_id = $1 AND m.state = 'LEFT'"
        case nil: sql = "SELECT \(Self.memberColumns) FROM \(Self.memberTables) WHERE m.room_id = $1"
        }
        let members = try keysetPage(sql, [.text(roomID)], by: "m.joined_at", then: "m.id", descending: descending, after: cursor,
                                     pageSize: pageSize).map(\.memberRecord)
        return Page(items: members, pageSize: pageSize) { PageCursor(number: $0.joinedAt, id: $0.memberID) }
    }

    public func hasMembership(userID: String, roomID: String) throws -> Bool {
        try db.queryOne("SELECT 1 AS found FROM members WHERE room_id = $1 AND user_id = $2 LIMIT 1", [.text(roomID), .text(userID)]) != nil
    }

    public func events(roomID: String, since: Int64, pageSize: Int) throws -> Page<EventRecord> {
        let rows = try db.query("""
            SELECT seq, type, from_member, body, created_at FROM events
            WHERE room_id = $1 AND seq > $2 ORDER BY seq LIMIT $3
            """, [.text(roomID), .integer(since), .integer(Int64(pageSize + 1))])
        let events = rows.map { $0.eventRecord(roomID: roomID) }
        return Page(items: events, pageSize: pageSize) { PageCursor(number: $0.id, id: "") }
    }

    public func joinedMembers(roomID: String, role: MemberRole, pageSize: Int, cursor: PageCursor?) throws -> Page<MemberRecord> {
        let sql = """
            SELECT \(Self.memberColumns) FROM \(Self.joinedMemberTables)
            WHERE m.room_id = $1 AND m.state = 'JOINED' AND COALESCE(ru.role, 'speaker') = $2
            """
        let members = try keysetPage(sql, [.text(roomID), .text(role.rawValue)], by: "m.joined_at", then: "m.id", descending: false,
                                     after: cursor, pageSize: pageSize).map(\.memberRecord)
        return Page(items: members, pageSize: pageSize) { PageCursor(number: $0.joinedAt, id: $0.memberID) }
    }

    public func presenceEventCount(roomID: String, since: Int64, limit: Int) throws -> Int {
        let row = try db.queryOne("""
            SELECT COUNT(*) AS found FROM (SELECT 1 FROM events WHERE room_id = $1 AND seq > $2
            AND type IN ('member:joined', 'member:left') LIMIT $3) AS presence
            """, [.text(roomID), .integer(since), .integer(Int64(limit))])
        return Int(row?.int("found") ?? 0)
    }

    public func sessionOwner(sessionID: String) throws -> String? {
        try db.queryOne("SELECT user_id FROM sessions WHERE id = $1", [.text(sessionID)])?.string("user_id")
    }

    public func raisedHands(roomID: String, pageSize: Int, cursor: PageCursor?) throws -> Page<MemberRecord> {
        let sql = """
            SELECT \(Self.memberColumns) FROM \(Self.joinedMemberTables)
            WHERE m.room_id = $1 AND m.state = 'JOINED' AND ru.hand_raised_at IS NOT NULL
            """
        let members = try keysetPage(sql, [.text(roomID)], by: "ru.hand_raised_at", then: "m.id", descending: false, after: cursor,
                                     pageSize: pageSize).map(\.memberRecord)
        return Page(items: members, pageSize: pageSize) { PageCursor(number: $0.handRaisedAt ?? 0, id: $0.memberID) }
    }

    public func stage(roomID: String, at time: Int64) throws -> RoomStage {
        var stage = RoomStage()
        for row in try db.query("SELECT user_id, role, hand_raised_at FROM room_users WHERE room_id = $1", [.text(roomID)]) {
            stage.roles[row.string("user_id") ?? ""] = (MemberRole(rawValue: row.string("role") ?? "") ?? .speaker, row.int("hand_raised_at"))
        }
        let bans = try db.query("SELECT user_id, client_address, until FROM room_bans WHERE room_id = $1 AND until > $2",
                                [.text(roomID), .integer(time)])
        for row in bans {
            let ban = RoomBan(userID: row.string("user_id") ?? "", storedAddresses: row.string("client_address"), until: row.int("until") ?? 0)
            stage.bans[ban.userID] = ban
        }
        return stage
    }
}

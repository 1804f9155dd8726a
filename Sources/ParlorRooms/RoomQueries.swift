import ParlorCodec
import ParlorProtocol
import ParlorStore

/// The read queries shared by the REST routes (on a reader connection) and the rooms thread (on the writer).
public enum RoomQueries {
    static let roomColumns = """
        r.id, r.name, r.display_name, r.created_by, r.created_at, r.closed_at, r.ttl, r.max_members, r.last_event_id,
        (SELECT COUNT(*) FROM members m WHERE m.room_id = r.id AND m.state = 'JOINED') AS member_count
        """

    static func room(from row: Row) -> RoomRecord {
        RoomRecord(id: row.string("id") ?? "", name: row.string("name") ?? "", displayName: row.string("display_name") ?? "",
                   createdBy: row.string("created_by"), createdAt: row.int("created_at") ?? 0, closedAt: row.int("closed_at"),
                   ttl: row.int("ttl") ?? 0, maxMembers: row.int("max_members"), memberCount: Int(row.int("member_count") ?? 0),
                   lastEventID: row.int("last_event_id") ?? 0)
    }

    public static func room(id: String, in db: SQLiteConnection) throws -> RoomRecord? {
        try db.queryOne("SELECT \(roomColumns) FROM rooms r WHERE r.id = ?", [.text(id)]).map(room(from:))
    }

    /// Open rooms, newest first, after `cursor` (an opaque position from the previous page).
    public static func openRooms(pageSize: Int, cursor: PageCursor?, in db: SQLiteConnection) throws -> Page<RoomRecord> {
        var sql = "SELECT \(roomColumns) FROM rooms r WHERE r.closed_at IS NULL"
        var params: [SQLValue] = []
        if let cursor {
            sql += " AND (r.created_at, r.id) < (?, ?)"
            params += [.integer(cursor.number), .text(cursor.id)]
        }
        sql += " ORDER BY r.created_at DESC, r.id DESC LIMIT ?"
        params.append(.integer(Int64(pageSize + 1)))
        let rooms = try db.query(sql, params).map(room(from:))
        return Page(items: rooms, pageSize: pageSize) { PageCursor(number: $0.createdAt, id: $0.id) }
    }

    static let memberColumns = """
        m.id, m.user_id, COALESCE(u.display_name, u.name) AS user_name, m.state, m.joined_at, m.left_at, m.audio_enabled, m.audio_muted
        """

    static func member(from row: Row) -> MemberRecord {
        MemberRecord(memberID: row.string("id") ?? "", user: User(id: row.string("user_id") ?? "", name: row.string("user_name") ?? ""),
                     state: MemberState(rawValue: row.string("state") ?? "") ?? .left, joinedAt: row.int("joined_at") ?? 0,
                     leftAt: row.int("left_at"), audioEnabled: row.int("audio_enabled") == 1, audioMuted: row.int("audio_muted") == 1)
    }

    /// Members of a room in join order (or reverse), filtered by state (nil: all states).
    public static func members(roomID: String, state: MemberState?, descending: Bool, pageSize: Int, cursor: PageCursor?,
                               in db: SQLiteConnection) throws -> Page<MemberRecord> {
        var sql = "SELECT \(memberColumns) FROM members m JOIN users u ON u.id = m.user_id WHERE m.room_id = ?"
        var params: [SQLValue] = [.text(roomID)]
        if let state {
            sql += " AND m.state = ?"
            params.append(.text(state.rawValue))
        }
        if let cursor {
            sql += descending ? " AND (m.joined_at, m.id) < (?, ?)" : " AND (m.joined_at, m.id) > (?, ?)"
            params += [.integer(cursor.number), .text(cursor.id)]
        }
        sql += descending ? " ORDER BY m.joined_at DESC, m.id DESC" : " ORDER BY m.joined_at, m.id"
        sql += " LIMIT ?"
        params.append(.integer(Int64(pageSize + 1)))
        let members = try db.query(sql, params).map(member(from:))
        return Page(items: members, pageSize: pageSize) { PageCursor(number: $0.joinedAt, id: $0.memberID) }
    }

    public static func member(id: String, in db: SQLiteConnection) throws -> MemberRecord? {
        try db.queryOne("SELECT \(memberColumns) FROM members m JOIN users u ON u.id = m.user_id WHERE m.id = ?", [.text(id)])
            .map(member(from:))
    }

    /// Whether the user is or was a member of the room (any state), which `RoomVisibility.members` requires.
    public static func hasMembership(userID: String, roomID: String, in db: SQLiteConnection) throws -> Bool {
        try db.queryOne("SELECT 1 AS found FROM members WHERE room_id = ? AND user_id = ? LIMIT 1", [.text(roomID), .text(userID)]) != nil
    }

    static func lastJoinedAt(roomID: String, in db: SQLiteConnection) throws -> Int64 {
        try db.queryOne("SELECT MAX(joined_at) AS latest FROM members WHERE room_id = ?", [.text(roomID)])?.int("latest") ?? 0
    }

    /// A room's events with ids above `since`, oldest first.
    public static func events(roomID: String, since: Int64, pageSize: Int, in db: SQLiteConnection) throws -> Page<EventRecord> {
        let rows = try db.query("""
            SELECT seq, type, from_member, body, created_at FROM events
            WHERE room_id = ? AND seq > ? ORDER BY seq LIMIT ?
            """, [.text(roomID), .integer(since), .integer(Int64(pageSize + 1))])
        let events = rows.map { row in
            EventRecord(roomID: roomID, id: row.int("seq") ?? 0, type: row.string("type") ?? "", from: row.string("from_member"),
                        body: (try? JSONParser.parse(row.string("body") ?? "{}")) ?? .object([:]), createdAt: row.int("created_at") ?? 0)
        }
        return Page(items: events, pageSize: pageSize) { PageCursor(number: $0.id, id: "") }
    }
}

/// A page of results and, when more follow, the cursor that continues after it.
public struct Page<Item: Sendable>: Sendable {
    public let items: [Item]
    public let next: PageCursor?

    /// `items` was fetched with one extra row to learn whether another page exists.
    init(items: [Item], pageSize: Int, cursorOf: (Item) -> PageCursor) {
        if items.count > pageSize {
            self.items = Array(items.prefix(pageSize))
            next = self.items.last.map(cursorOf)
        } else {
            self.items = items
            next = nil
        }
    }
}

/// An opaque keyset position: base64url of "number:id". Clients pass it back unchanged.
public struct PageCursor: Sendable, Equatable {
    public let number: Int64
    public let id: String

    public var encoded: String {
        Base64.encode(Array("\(number):\(id)".utf8))
            .replacing("+", with: "-").replacing("/", with: "_").replacing("=", with: "")
    }

    public init(number: Int64, id: String) {
        self.number = number
        self.id = id
    }

    public init?(encoded: String) {
        guard encoded.utf8.count <= 512, let bytes = Base64URL.decode(encoded) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let colon = text.firstIndex(of: ":"), let number = Int64(text[..<colon]) else { return nil }
        self.number = number
        id = String(text[text.index(after: colon)...])
    }
}

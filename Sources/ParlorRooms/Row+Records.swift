import ParlorProtocol
import ParlorStore

// The domain's records from rows named as in the schema, for stores in other modules (ParlorRoomsPostgres): their
// results arrive as the same typed rows as SQLite's (booleans as 1 and 0).
extension Row {
    /// A room row with `member_count` (see `SQLiteRoomReading.roomColumns`).
    public var roomRecord: RoomRecord { SQLiteRoomReader.room(from: self) }

    /// A member row with `user_name`, `role` and `hand_raised_at` (see `SQLiteRoomReading.memberColumns`).
    public var memberRecord: MemberRecord { SQLiteRoomReader.member(from: self) }

    /// An events row (`seq`, `type`, `from_member`, `body`, `created_at`) of room `roomID`. The body stays the
    /// JSON text stored (always an object the server wrote): a replay splices it into frames without a parse.
    public func eventRecord(roomID: String) -> EventRecord {
        EventRecord(roomID: roomID, id: int("seq") ?? 0, type: string("type") ?? "", from: string("from_member"),
                    encodedBody: Array((string("body") ?? "{}").utf8), createdAt: int("created_at") ?? 0)
    }

    /// A room row with `empty_since` and `created_from` as well, and its JOINED members.
    public func storedRoom(lastJoinedAt: Int64, members: [MemberRecord]) -> StoredRoom {
        StoredRoom(record: roomRecord, emptySince: int("empty_since"), createdFrom: string("created_from"),
                   lastJoinedAt: lastJoinedAt, members: members)
    }
}


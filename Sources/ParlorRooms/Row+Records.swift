import ParlorProtocol
import ParlorStore

// The domain's records from rows named as in the schema, for the stores of both dialects (ParlorRoomsSQLite,
// ParlorRoomsPostgres): their results arrive as the same typed rows (booleans as 1 and 0).
extension Row {
    /// A rooms row with `last_event_id` and `member_count` (each store's `roomColumns`).
    public var roomRecord: RoomRecord {
        var record = RoomRecord(id: string("id") ?? "", name: string("name") ?? "", displayName: string("display_name") ?? "",
                                createdBy: string("created_by"), createdAt: int("created_at") ?? 0, closedAt: int("closed_at"),
                                ttl: int("ttl") ?? 0, maxMembers: int("max_members"), memberCount: Int(int("member_count") ?? 0),
                                lastEventID: int("last_event_id") ?? 0)
        record.mode = RoomMode(rawValue: string("mode") ?? "") ?? .open
        record.locked = int("locked") == 1
        record.e2ee = int("e2ee") == 1
        record.streamPublic = int("stream_public") == 1
        return record
    }

    /// A members row with `user_name`, `role` and `hand_raised_at` (`SQLRoomReading.memberColumns`).
    public var memberRecord: MemberRecord {
        var member = MemberRecord(memberID: string("id") ?? "", user: User(id: string("user_id") ?? "", name: string("user_name") ?? ""),
                                  state: MemberState(rawValue: string("state") ?? "") ?? .left, joinedAt: int("joined_at") ?? 0,
                                  leftAt: int("left_at"), audioEnabled: int("audio_enabled") == 1, audioMuted: int("audio_muted") == 1)
        member.role = MemberRole(rawValue: string("role") ?? "") ?? .speaker
        member.handRaisedAt = int("hand_raised_at")
        return member
    }

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

    /// A users row (`SQLUserTransaction.userColumns`): the display name, or the handle when it has none.
    public var userStatus: UserDirectory.UserStatus {
        let handle = string("name") ?? ""
        return UserDirectory.UserStatus(user: User(id: string("id") ?? "", name: string("display_name") ?? handle),
                                        tokensValidAfter: int("tokens_valid_after") ?? 0, blockedUntil: int("blocked_until") ?? 0)
    }

    /// A webhook_outbox row (`sequence`, `event`, `body`, `created_at`) for receiver `target`.
    public func webhookOutboxRow(target: String) -> WebhookOutboxRow {
        WebhookOutboxRow(sequence: int("sequence") ?? 0,
                         entry: WebhookOutboxEntry(target: target, event: string("event") ?? "", body: bytes("body") ?? [],
                                                   createdAt: int("created_at") ?? 0))
    }
}

import ParlorProtocol

/// Where the rooms domain keeps its record: rooms, memberships, events and sessions. The rooms thread is its only
/// writer (one transaction per batch, a savepoint per command); the REST routes read it from any thread.
///
/// Operations speak the domain, not SQL, so another database is another conforming type (SQLiteRoomStore is the
/// first). Event ids are allocated by `RoomTransaction.appendEvent`, inside the transaction that commits them:
/// commit order is id order.
public protocol RoomStore: Sendable {
    /// Runs `body` in one write transaction and commits; rolls back and rethrows if `body` or the commit throws.
    /// Called from the rooms thread only.
    func write<T>(_ body: (any RoomTransaction) throws -> T) throws -> T
    /// Runs `body` on one consistent snapshot. Any thread; it never waits on a write in progress.
    func read<T>(_ body: (any RoomReader) throws -> T) throws -> T
    /// Whether `error` says the storage itself failed (disk full, I/O): requesters are told to try later.
    func isStorageFailure(_ error: any Error) -> Bool
}

/// What the REST routes and the rooms thread read.
public protocol RoomReader: RecordingReader {
    /// A room, open or closed, with its JOINED member count.
    func room(id: String) throws -> RoomRecord?
    /// Open rooms, newest first, after `cursor` (an opaque position from the previous page).
    func openRooms(pageSize: Int, cursor: PageCursor?) throws -> Page<RoomRecord>
    /// Members of a room in join order (or reverse), filtered by state (nil: all states).
    func members(roomID: String, state: MemberState?, descending: Bool, pageSize: Int, cursor: PageCursor?) throws -> Page<MemberRecord>
    /// Whether the user is or was a member of the room (any state), which `RoomVisibility.members` requires.
    func hasMembership(userID: String, roomID: String) throws -> Bool
    /// A room's events with ids above `since`, oldest first.
    func events(roomID: String, since: Int64, pageSize: Int) throws -> Page<EventRecord>
    /// Joined members with `role` (no stored role: speaker), in join order, after `cursor`.
    func joinedMembers(roomID: String, role: MemberRole, pageSize: Int, cursor: PageCursor?) throws -> Page<MemberRecord>
    /// How many member:joined and member:left events the room holds after `since`, counting at most `limit`.
    func presenceEventCount(roomID: String, since: Int64, limit: Int) throws -> Int
    /// The user a session belongs to, if the session is still known.
    func sessionOwner(sessionID: String) throws -> String?
    /// An open room as the rooms thread loads it (nil when it is closed or unknown).
    func openRoomState(id: String) throws -> StoredRoom?
    /// JOINED members whose hand is up, in the order they raised it.
    func raisedHands(roomID: String, pageSize: Int, cursor: PageCursor?) throws -> Page<MemberRecord>
    /// Every user's role and hand in the room, and the bans that have not expired at `time`.
    func stage(roomID: String, at time: Int64) throws -> RoomStage
}

/// The rooms thread's write transaction: domain changes, each a statement or two.
public protocol RoomTransaction: RoomReader, RecordingWriter {
    /// Runs `body` in a savepoint: if it throws, its changes are undone and the rest of the transaction stays.
    func withSavepoint<T>(_ body: () throws -> T) throws -> T
    /// False once the database ended the transaction by itself (some storage errors do): nothing more can commit.
    var isActive: Bool { get }

    // Rooms
    /// Stores a new room, empty since its creation; throws `RoomError.nameTaken` when its name is in use.
    func createRoom(_ room: RoomRecord, createdFrom: String?) throws
    func closeRoom(id: String, at time: Int64) throws
    /// Records since when a room has no member (nil: it has members again), for ttl expiry across restarts.
    func setRoomEmpty(id: String, since time: Int64?) throws
    /// Stores the room's next event (its id is the room's last plus one, allocated here) and returns it.
    /// `encodedBody` is a JSON object's bytes (see `appendEvent(roomID:type:from:body:at:)` for a tree).
    func appendEvent(roomID: String, type: String, from: String?, encodedBody: [UInt8], at time: Int64) throws -> EventRecord
    /// Deletes at most `limit` of the room's oldest events with ids up to `through`; returns how many.
    func pruneEvents(roomID: String, through: Int64, limit: Int) throws -> Int

    // Stage rooms
    func setLocked(roomID: String, _ locked: Bool) throws
    /// room:stream:public: the room's live stream open to anyone with the link, or not.
    func setStreamPublic(roomID: String, _ isPublic: Bool) throws
    /// The user's role in the room (kept after the membership ends).
    func setRole(roomID: String, userID: String, _ role: MemberRole) throws
    /// The user's hand: up since `time`, or down (nil).
    func setHand(roomID: String, userID: String, raisedAt time: Int64?) throws
    /// Bans the user, and the client address if known, until `until`; replaces an earlier ban of the user.
    func ban(_ ban: RoomBan, roomID: String) throws

    // Members
    func addMember(id: String, roomID: String, userID: String, joinedAt: Int64) throws
    /// JOINED → LEFT with `reason`.
    func endMembership(memberID: String, reason: LeaveReason, at time: Int64) throws
    /// JOINED and disconnected since `time` (grace period), or present again (nil).
    func setDisconnected(memberID: String, since time: Int64?) throws
    func setMedia(memberID: String, audioEnabled: Bool, audioMuted: Bool) throws

    // Sessions
    func openSession(id: String, userID: String, at time: Int64) throws
    /// From then on the session can be resumed for the grace period.
    func endSession(id: String, at time: Int64) throws
    /// Deletes up to `limit` sessions that ended before `time`; returns how many.
    func deleteSessions(endedBefore time: Int64, limit: Int) throws -> Int

    // Start
    /// What a previous process left: every JOINED membership is disconnected and every open session ended at `time`.
    /// Returns how many memberships that affected.
    func markPreviousRunAway(at time: Int64) throws -> Int
    /// Gives open rooms with a ttl above `maxTTL` that ttl; returns how many.
    func limitOpenRoomTTLs(to maxTTL: Int64) throws -> Int
    /// Every open room with its JOINED members.
    func openRoomStates() throws -> [StoredRoom]
    /// The newest room's created_at (0 without rooms): new rooms are created after it.
    func latestRoomCreatedAt() throws -> Int64

    /// Test mode: deletes every user, room, member, event and session.
    func deleteEverything() throws
}

/// A room's roles, hands and live bans, per user, as stored.
public struct RoomStage: Sendable {
    public var roles: [String: (role: MemberRole, handRaisedAt: Int64?)] = [:]
    public var bans: [String: RoomBan] = [:]
    public init() {}
}

/// A user (and the client addresses it had lately) banned from a room until `until` (Unix ms).
public struct RoomBan: Sendable, Equatable {
    public let userID: String
    public let clientAddresses: [String]
    public let until: Int64
    public init(userID: String, clientAddresses: [String], until: Int64) {
        self.userID = userID
        self.clientAddresses = clientAddresses
        self.until = until
    }

    /// The addresses as `room_bans.client_address` keeps them: separated by spaces, which no address key holds
    /// (a row from before issue 34 holds one address, read the same way); NULL for none.
    public var storedAddresses: String? { clientAddresses.isEmpty ? nil : clientAddresses.joined(separator: " ") }

    public init(userID: String, storedAddresses: String?, until: Int64) {
        self.init(userID: userID, clientAddresses: (storedAddresses ?? "").split(separator: " ").map(String.init), until: until)
    }
}

/// An open room as stored, with what the rooms thread keeps live.
public struct StoredRoom: Sendable {
    public let record: RoomRecord
    public let emptySince: Int64?
    /// The creating client's address key, counted by the per-address cap.
    public let createdFrom: String?
    /// The newest member's joined_at (0 without members).
    public let lastJoinedAt: Int64
    /// JOINED members in join order.
    public let members: [MemberRecord]
}

extension RoomTransaction {
    /// Stores the room's next event with a body given as a tree; the record keeps the tree.
    public func appendEvent(roomID: String, type: String, from: String?, body: JSONValue, at time: Int64) throws -> EventRecord {
        let appended = try appendEvent(roomID: roomID, type: type, from: from, encodedBody: body.encoded(), at: time)
        return EventRecord(roomID: roomID, id: appended.id, type: type, from: from, body: body, createdAt: time,
                           encodedBody: appended.encodedBody)
    }
}

import ParlorBasics
import ParlorMedia
import ParlorMetrics
import ParlorProtocol

/// The rooms thread's live state: the open rooms (members, attached connections, timers) and the connected
/// clients. The store is the record; this is what only lives in memory. One owner, `RoomsService`, hands it out
/// on the rooms thread only (`RoomsService.state` asserts so in debug builds); it is not Sendable.
final class RoomsState {
    var rooms: [String: LiveRoom] = [:]
    var clients: [ClientID: ClientState] = [:]
    /// The addresses each user connected from lately, which a room ban bans too (RecentAddresses.swift).
    var recentAddresses = RecentAddresses()
    /// The connection holding each session: its own, or the last that resumed it (RoomsService+Sessions.swift).
    var sessionHolders: [String: ClientID] = [:]
    /// Bytes of replay pages sent and not yet drained, across all connections, and the connections waiting for
    /// the budget to allow their next page, first from `replayWaiterHead` (RoomsService+Replay.swift).
    var replayBytesCharged = 0
    var replayWaiters: [ClientID] = []
    var replayWaiterHead = 0
    /// The newest room's created_at: rooms list newest first by it, so it must increase even within a millisecond.
    var lastRoomCreatedAt: Int64 = 0
    /// Member counts as last published to the metrics, per room, and their sum (RoomsService+Metrics.swift).
    var publishedMemberCounts: [String: Int] = [:]
    var publishedMemberTotal = 0
    /// Rooms whose re-read after a failed batch failed too (the database unreachable): memory may be ahead of the
    /// record (a join that never committed), so they are read again before each batch until it works.
    var staleRooms: Set<String> = []
}

/// A connected client as the rooms thread tracks it.
struct ClientState {
    let ref: ClientRef
    var rooms: Set<String> = []
    /// Rooms this connection watches without being a member (conversation:watch).
    var watching: Set<String> = []
    /// Sessions this connection holds: its own, and those it resumed.
    var heldSessions: [String] = []
    /// Rooms whose replay is still to be sent, in order; the bytes of its page not yet drained; whether it waits
    /// for the replay budget.
    var replays: [ReplayCursor] = []
    var replayCharge = 0
    var replayWaiting = false
}

/// What one command works with: the store transaction it writes in (inside its own savepoint) and the batch
/// collecting what it sends once everything has committed.
struct Step {
    let store: any RoomTransaction
    var batch: Batch
    /// `--max-room-events`: the history a room keeps, which each appended event prunes to (RoomContext.swift).
    let maxRoomEvents: Int
}

/// Who sent a request and how its reply is addressed.
struct Caller {
    let client: ClientRef
    let tid: JSONValue
    var user: User { client.user }
}

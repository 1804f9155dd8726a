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
    /// Member counts as last published to the metrics, per room, and their sum (RoomsService+Metrics.swift).
    var publishedMemberCounts: [String: Int] = [:]
    var publishedMemberTotal = 0
    /// The rooms last published as in summary presence (parlor_rooms_summary_presence).
    var publishedSummaryRooms: Set<String> = []
}

/// A connected client as the rooms thread tracks it.
struct ClientState {
    let ref: ClientRef
    var rooms: Set<String> = []
    /// Rooms this connection watches without being a member (conversation:watch).
    var watching: Set<String> = []
}

/// What one command works with: the store transaction it writes in (inside its own savepoint) and the batch
/// collecting what it sends once everything has committed.
struct Step {
    let store: any RoomTransaction
    var batch: Batch
    /// What the room's rules need from the server (the clock, the configuration, the limits).
    let rules: RoomRules
}

/// Who sent a request and how its reply is addressed.
struct Caller {
    let client: ClientRef
    let tid: JSONValue
    var user: User { client.user }
}

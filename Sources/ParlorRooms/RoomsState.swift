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
    /// With several nodes: per room, the last event id this node's connections were sent (RoomsService+Cluster.swift).
    var clusterDelivered: [String: Int64] = [:]
    /// Rooms brought up to date in the batch in progress, and their cursors from before it (restored if it fails).
    var clusterSynced: Set<String> = []
    var clusterUndo: [String: Int64?] = [:]
    /// The heads of the rooms the batch in progress locked at its start, each taken by the room's first catch-up.
    var clusterLockedHeads: [String: (lastEventID: Int64, closed: Bool)] = [:]
    /// Catch-ups applied from the events (RoomsService+ClusterCatchUp.swift), and those that could have been but read
    /// the room back whole instead (not counting resyncs and takeovers, which always do): for tests.
    var clusterApplied = 0
    var clusterReloads = 0
    /// Told of users changed on other nodes (`RoomsService.observeClusterUserChanges`).
    var clusterUserObserver: (@Sendable (String) -> Void)?
    /// Media sessions with the forwarding unit (--media sfu), by id, and their ids by connection and room
    /// (RoomsService+SFU.swift).
    var mediaSessions: [UInt64: MediaSessionRecord] = [:]
    var mediaSessionIDs: [MediaSessionKey: UInt64] = [:]
    var mediaSessionsByRoom: [String: Set<UInt64>] = [:]
    var nextMediaSessionID: UInt64 = 1
    /// media:offer rate per connection and per user (RoomsService+MediaLimits.swift).
    var mediaOfferBuckets: [ClientID: OfferBucket] = [:]
    var mediaOfferUserBuckets: [String: OfferBucket] = [:]
    /// Per room, the senders last handed to the media loop.
    var mediaSenders: [String: Set<String>] = [:]
    /// With several nodes: this node's connections whose media session is on another node, the room's media home,
    /// by connection and room and by the token the home knows them by; relayed offers waiting for the home's
    /// answer (RoomsService+MediaHome.swift).
    var remoteMedia: [MediaSessionKey: RemoteMediaSession] = [:]
    var remoteMediaByToken: [String: MediaSessionKey] = [:]
    var pendingMediaOffers: [UInt64: PendingMediaOffer] = [:]
    var nextMediaRelayID: UInt64 = 1
}

/// A connection's media session in a room, as the rooms thread tracks it.
struct MediaSessionRecord {
    /// The connection that offered last (a reconnected client's new connection takes its session over).
    var key: MediaSessionKey
    let memberID: String
    let userID: String
    /// The offering client's address as per-address limits count it (nil for an offer relayed by another node).
    let addressKey: String?
    /// What its last offer set up, which a new offer of the same peer connection renegotiates.
    let setup: MediaSessionSetup
    /// The slots as the media thread last reported them (`media:slots`): a renegotiation's reply repeats them.
    var slots: [MediaSlotAssignment] = []
}

struct MediaSessionKey: Hashable {
    let connection: MediaConnection
    let roomID: String

    init(clientID: ClientID, roomID: String) {
        connection = .local(clientID)
        self.roomID = roomID
    }

    init(_ connection: MediaConnection, roomID: String) {
        self.connection = connection
        self.roomID = roomID
    }

    /// The connection, when it is this node's.
    var clientID: ClientID? {
        if case .local(let clientID) = connection { return clientID }
        return nil
    }
}

/// The WebSocket that offered a media session: on this node, or on another node that relayed the offer to this
/// one, the room's media home (that node's token for the connection).
enum MediaConnection: Hashable {
    case local(ClientID)
    case remote(node: String, token: String)
}

/// A connection of this node whose media session is on another node.
struct RemoteMediaSession {
    let token: String
    let home: String
    let memberID: String
    let userID: String
}

/// A media:offer relayed to the room's media home, until its answer comes back (or the timer gives up).
struct PendingMediaOffer {
    let caller: Caller
    let key: MediaSessionKey
    let timer: RoomsTimer
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

import ParlorProtocol

/// A store shared by several Parlor nodes (PostgreSQL): what the rooms thread needs beyond `RoomStore` to keep its
/// live rooms current with what other nodes commit, and to take over the members of a node that died.
/// A `RoomsService` given a `ClusterLink` expects its store's transactions to be `ClusterTransaction`s.
public protocol ClusterTransaction: RoomTransaction {
    /// This process's node id, recorded on the memberships and sessions it holds.
    var nodeID: String { get }
    /// Tells every other node, at the commit, to send `message` (a room's message that is not stored, at most a few
    /// KiB) to its connections in the room (`ClusterSignal.unstored`).
    func notifyUnstored(roomID: String, message: [UInt8]) throws
    /// The room's last event id and whether it is closed (nil: no such room). `lock`: hold the room's row until the
    /// commit, so no other node changes the room (or allocates an event id in it) before this transaction ends.
    func roomHead(id: String, lock: Bool) throws -> (lastEventID: Int64, closed: Bool)?
    /// Locks these rooms' rows, in the order given, until the commit; returns their heads as `roomHead` would.
    func lockRooms(_ ids: [String]) throws -> [String: (lastEventID: Int64, closed: Bool)]
    /// Each JOINED member's presence as stored: disconnected since (nil: present) and the node holding it.
    func presence(roomID: String) throws -> [String: MemberPresence]
    /// Registers this node with a lease of `lease` milliseconds by the database's clock.
    func registerNode(lease: Int64) throws
    /// Takes over the JOINED memberships (and ends the open sessions) of every other node whose lease has ended,
    /// deleting those nodes' rows: when several survivors try at once, each node is taken over exactly once.
    /// Members present until now become disconnected since `time`. Returns the members taken.
    func takeOverExpiredNodes(at time: Int64) throws -> [TakenMember]
    /// Makes this node the holder of the user's JOINED membership in the room (a resume or join here); a member
    /// that was present (on a node that died) is disconnected since `time` until the request attaches it.
    /// Returns the member and since when it is disconnected (nil: present), or nil when the user is not a member.
    func claimMembership(roomID: String, userID: String, at time: Int64) throws -> (memberID: String, disconnectedAt: Int64?)?
    /// Stores a signalling message (its encoded JSON) for the member's connections when another node holds the
    /// member, and tells that node; false when no other node does (the member is unknown, or held here).
    func relaySignal(roomID: String, toMember memberID: String, message: [UInt8], at time: Int64) throws -> Bool
    /// Deletes and returns the signalling messages waiting for this node, oldest first.
    func takeSignals() throws -> [(roomID: String, memberID: String, message: [UInt8])]
    /// Serialises room creation across nodes until the commit (the open-room limits are counted under it).
    func lockRoomCreation() throws
    /// The ids of every open room.
    func openRoomIDs() throws -> [String]
    /// Whether this node may drop the member now: JOINED, held by this node (or by none), disconnected at or before `time`.
    func mayDrop(memberID: String, disconnectedAtOrBefore time: Int64) throws -> Bool
}

/// A JOINED member's presence as stored.
public struct MemberPresence: Sendable, Equatable {
    public let disconnectedAt: Int64?
    public let nodeID: String?
    public init(disconnectedAt: Int64?, nodeID: String?) {
        self.disconnectedAt = disconnectedAt
        self.nodeID = nodeID
    }
}

/// A membership taken over from a node whose lease ended.
public struct TakenMember: Sendable, Equatable {
    public let memberID: String
    public let roomID: String
    public let disconnectedAt: Int64
    public init(memberID: String, roomID: String, disconnectedAt: Int64) {
        self.memberID = memberID
        self.roomID = roomID
        self.disconnectedAt = disconnectedAt
    }
}

/// What another node (or the link itself) tells the rooms thread.
public enum ClusterSignal: Sendable, Equatable {
    /// A room changed on some node (an event, its creation or close): catch up from the store. `through`: the
    /// event's id (0 for a creation, -1 for a close; nil if unknown).
    case roomChanged(String, through: Int64?)
    /// Notifications may have been missed (the link connected again): catch up every room.
    case resync
    /// Some node's lease has ended: take over its members.
    case nodesExpired
    /// Signalling frames wait for this node (`ClusterTransaction.takeSignals`).
    case signals
    /// This node's lease had ended and a survivor took its members over while it was alive (a pause, a network
    /// cut): it claims back those whose connections are still attached here.
    case leaseLost
    /// A user's tokens or claim changed on some node: forget what this node cached about the user; `revoked`: an
    /// admin revoked its tokens, so its connections here close too.
    case userChanged(String, revoked: Bool)
    /// The forwarding unit's media home (MediaHomes.swift): relayed messages, speaking, a home lost.
    case mediaHome(MediaHomeSignal)
    /// A room's message that is not stored (a reaction), sent by `node` to its own connections in the room: every
    /// other node sends it to its connections there.
    case unstored(node: String, roomID: String, message: [UInt8])
}

/// The link between nodes (PostgreSQL: LISTEN/NOTIFY and the node's heartbeat). It calls the handler from a
/// thread of its own; the rooms thread turns each signal into a command.
public protocol ClusterLink: Sendable {
    var nodeID: String { get }
    /// Starts listening and heartbeating; `handler` gets every signal from then on.
    func start(_ handler: @escaping @Sendable (ClusterSignal) -> Void) throws
    /// Stops, and gives up the node's lease so that a survivor (or this node's next start) takes over its members
    /// at once.
    func stop()
}

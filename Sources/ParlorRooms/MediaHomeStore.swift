/// Several nodes with the forwarding unit: one node at a time serves a room's audio, its media home
/// (MediaHomes.swift). What the rooms thread needs from the shared store for that.
public protocol MediaHomeTransaction: ClusterTransaction {
    /// Records where this node's forwarding unit is reached ("ip:port", comma-separated), for operators.
    func setMediaAddress(_ address: String) throws
    /// The room's media home: the node recorded, if it still holds a lease; else this node, recorded now. Call with
    /// the room's row locked, so two nodes choose one home.
    func chooseMediaHome(roomID: String) throws -> String
    /// Stores a message for `node` and tells it (NOTIFY at the commit).
    func relayMedia(_ message: [UInt8], roomID: String, to node: String, at time: Int64) throws
    /// Deletes and returns the messages waiting for this node, oldest first.
    func takeMediaMessages() throws -> [(roomID: String, message: [UInt8])]
    /// Tells every node (this one too) at the commit.
    func notifyMedia(_ signal: MediaHomeSignal) throws
    /// Clears the media home of rooms whose home node has no row any more (taken over), and deletes the messages
    /// waiting for such nodes. Returns each room and its former home.
    func releaseDeadMediaHomes() throws -> [(roomID: String, node: String)]
}

/// What the media-home relay tells the rooms thread: sent between nodes as a NOTIFY payload ("media …"), except
/// `timedOut`, which is the node's own timer.
public enum MediaHomeSignal: Sendable, Equatable {
    /// Messages wait for `node` (`MediaHomeTransaction.takeMediaMessages`).
    case relayed(node: String)
    /// The home of room `roomID` (`home`) heard member `memberID` start or stop speaking.
    case speaking(home: String, roomID: String, memberID: String, on: Bool)
    /// Room `roomID` lost its media home `home` (that node died): sessions through it are gone, clients offer again.
    case restart(home: String, roomID: String)
    /// A relayed offer of this node got no answer in time.
    case timedOut(request: UInt64)

    /// Every payload starts with it (room ids never do).
    public static let prefix = "media "

    /// The NOTIFY payload (nil for `timedOut`, never sent).
    public var payload: String? {
        switch self {
        case .relayed(let node): "\(Self.prefix)relay \(node)"
        case .speaking(let home, let roomID, let memberID, let on): "\(Self.prefix)speaking \(home) \(roomID) \(memberID) \(on ? 1 : 0)"
        case .restart(let home, let roomID): "\(Self.prefix)restart \(home) \(roomID)"
        case .timedOut: nil
        }
    }

    /// Reads a payload; nil when it is malformed or `relayed` names another node.
    public init?(payload: String, nodeID: String) {
        guard payload.hasPrefix(Self.prefix) else { return nil }
        let words = payload.dropFirst(Self.prefix.count).split(separator: " ").map(String.init)
        switch (words.first, words.count) {
        case ("relay", 2) where words[1] == nodeID: self = .relayed(node: words[1])
        case ("speaking", 5): self = .speaking(home: words[1], roomID: words[2], memberID: words[3], on: words[4] == "1")
        case ("restart", 3): self = .restart(home: words[1], roomID: words[2])
        default: return nil
        }
    }
}

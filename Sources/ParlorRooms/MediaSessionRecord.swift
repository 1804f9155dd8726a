import ParlorMedia

/// A connection's media session in a room, as the rooms thread tracks it (`MediaSessions`).
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

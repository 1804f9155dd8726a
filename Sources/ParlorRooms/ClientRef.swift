/// A connected client as the rooms domain knows it, opaque: the delivery layer that made it knows which connection
/// it stands for (ParlorApp's `WebSocketDelivery`); the domain only compares and hashes it.
public struct ClientID: Hashable, Sendable, CustomStringConvertible {
    public let value: UInt64

    public init(_ value: UInt64) { self.value = value }

    public var description: String { "client \(value)" }
}

/// One client connection as the rooms domain knows it: where to send, which session, which user.
public struct ClientRef: Sendable, Hashable {
    public let id: ClientID
    public let sessionID: String
    public let user: User
    /// The client's `ClientAddress.limitKey`, which a room ban holds too; nil when unknown.
    public let address: String?

    public init(id: ClientID, sessionID: String, user: User, address: String? = nil) {
        self.id = id
        self.sessionID = sessionID
        self.user = user
        self.address = address
    }

    public static func == (a: ClientRef, b: ClientRef) -> Bool { a.id == b.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

import ParlorLoop

/// One WebSocket connection as the rooms domain knows it: where to send, which session, which user.
public struct ClientRef: Sendable, Hashable {
    public let handle: ConnectionHandle
    public let sessionID: String
    public let user: User
    /// The client's `ClientAddress.limitKey`, which a room ban holds too; nil when unknown.
    public let address: String?

    public init(handle: ConnectionHandle, sessionID: String, user: User, address: String? = nil) {
        self.handle = handle
        self.sessionID = sessionID
        self.user = user
        self.address = address
    }

    public static func == (a: ClientRef, b: ClientRef) -> Bool { a.handle == b.handle }
    public func hash(into hasher: inout Hasher) { hasher.combine(handle) }
}

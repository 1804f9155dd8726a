import ParlorLoop

/// One WebSocket connection as the rooms domain knows it: where to send, which session, which user.
public struct ClientRef: Sendable, Hashable {
    public let handle: ConnectionHandle
    public let sessionID: String
    public let user: User

    public init(handle: ConnectionHandle, sessionID: String, user: User) {
        self.handle = handle
        self.sessionID = sessionID
        self.user = user
    }

    public static func == (a: ClientRef, b: ClientRef) -> Bool { a.handle == b.handle }
    public func hash(into hasher: inout Hasher) { hasher.combine(handle) }
}

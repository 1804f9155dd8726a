import ParlorLoop

/// Behaviour of live rooms.
public struct RoomsConfiguration: Sendable {
    /// How long a member whose connections all dropped keeps its membership before `member:left` reason `dropped`.
    public var gracePeriod = TimeSpan.seconds(20)
    /// Seconds an empty room is kept when it does not say (the tutorial's 300).
    public var defaultRoomTTL: Int64 = 300
    public var defaultPageSize = 100
    public var maxPageSize = 1000
    /// Events replayed on session:resume per room at most; a client further behind is told to rejoin.
    public var maxReplayEvents = 10_000

    public init() {}
}

import ParlorBasics
import ParlorProtocol

/// What catching a room up from other nodes' records asks of the room's own rules, which it does not duplicate:
/// arming a room's ttl and a member's drop, a member's departure (its connections here, its hand, the empty room's
/// ttl), closing a revoked user's connections, and the ttl limit on stored rooms at start. The rooms service
/// provides them (with its existing methods); `ClusterSync` holds it unowned, as the service owns the `ClusterSync`.
protocol ClusterRoomRules: AnyObject {
    func scheduleExpiry(of room: LiveRoom)
    func scheduleDrop(_ memberID: String, in room: LiveRoom, after delay: TimeSpan)
    @discardableResult
    func dismiss(_ member: LiveMember, from room: LiveRoom, at now: Int64) -> Bool
    func run(_ operation: Operation, _ step: inout Step) throws -> JSONValue
    func limitStoredRooms(_ transaction: any RoomTransaction) throws
}

/// The media homes (MediaSessions+Home.swift, MediaHomes.swift) as the cluster's signals reach them: this node's media address
/// registered at start, the homes of nodes whose lease ended released, a relayed media message handled.
protocol ClusterMediaHomes: AnyObject {
    func registerMediaAddress(_ transaction: any ClusterTransaction) throws
    func releaseMediaHomes(_ transaction: any ClusterTransaction, _ batch: inout Batch) throws
    func handleMediaHome(_ signal: MediaHomeSignal, _ transaction: any ClusterTransaction, _ batch: inout Batch) throws
}

extension RoomsService: ClusterRoomRules {}

/// A client request the rooms thread serves, already checked for shape by the protocol layer.
public enum RoomRequest: Sendable {
    case join(cid: String)
    case leave(cid: String)
    case members(cid: String, query: MembersQuery)
    case events(cid: String, since: Int64, pageSize: Int)
    case resume(sessionID: String, lastEventIDs: [(cid: String, lastEventID: Int64)])

    /// The request's `type`, which its success reply echoes as `type:success`.
    public var type: String {
        switch self {
        case .join: "conversation:join"
        case .leave: "conversation:leave"
        case .members: "conversation:members"
        case .events: "conversation:events"
        case .resume: "session:resume"
        }
    }
}

public struct MembersQuery: Sendable {
    public var pageSize: Int
    public var cursor: PageCursor?
    public var descending: Bool
    /// nil: JOINED only, the default; a state filter lists those instead (LEFT shows history).
    public var state: MemberState?
    public var allStates: Bool

    public init(pageSize: Int, cursor: PageCursor?, descending: Bool, state: MemberState?, allStates: Bool = false) {
        self.pageSize = pageSize
        self.cursor = cursor
        self.descending = descending
        self.state = state
        self.allStates = allStates
    }
}

/// What POST /rooms asks for, validated.
public struct NewRoom: Sendable {
    public var name: String?
    public var displayName: String
    public var ttl: Int64?
    public var maxMembers: Int64?
    public var createdBy: User?

    public init(name: String?, displayName: String, ttl: Int64?, maxMembers: Int64?, createdBy: User?) {
        self.name = name
        self.displayName = displayName
        self.ttl = ttl
        self.maxMembers = maxMembers
        self.createdBy = createdBy
    }
}

import ParlorLoop

/// A member as the rooms thread holds it while JOINED.
struct LiveMember {
    let id: String
    let user: User
    let joinedAt: Int64
    var audioEnabled = false
    var audioMuted = false
    /// Memory only: speaking changes are too frequent to store.
    var speaking = false
    /// Set while none of the user's connections is attached; the member drops when the grace period ends.
    var disconnectedAt: Int64?
    var dropTimer: RoomsTimer?

    var record: MemberRecord {
        MemberRecord(memberID: id, user: user, state: .joined, joinedAt: joinedAt, leftAt: nil,
                     audioEnabled: audioEnabled, audioMuted: audioMuted)
    }
}

/// An open room's live state, owned by the rooms thread. The database is the record; this is its working copy
/// plus what only lives in memory: which connections are attached to which member.
final class LiveRoom {
    let id: String
    let name: String
    let displayName: String
    let createdBy: String?
    let createdAt: Int64
    let ttl: Int64
    let maxMembers: Int64?
    /// The creating client's address key (rooms.created_from), counted by the per-address cap.
    var createdFrom: String?
    var lastEventID: Int64
    var emptySince: Int64?
    var ttlTimer: RoomsTimer?
    /// The newest member's joined_at: members list in join order by it, so it must increase even within a millisecond.
    var lastJoinedAt: Int64 = 0

    private(set) var members: [String: LiveMember] = [:]
    private(set) var memberIDByUser: [String: String] = [:]
    /// Connections receiving this room's events, by user id.
    private(set) var attached: [String: Set<ConnectionHandle>] = [:]
    /// Connections that receive this room's events without a membership (conversation:watch).
    private(set) var watchers: Set<ConnectionHandle> = []

    init(record: RoomRecord, emptySince: Int64?) {
        id = record.id
        name = record.name
        displayName = record.displayName
        createdBy = record.createdBy
        createdAt = record.createdAt
        ttl = record.ttl
        maxMembers = record.maxMembers
        lastEventID = record.lastEventID
        self.emptySince = emptySince
    }

    var memberCount: Int { members.count }

    func member(forUser userID: String) -> LiveMember? {
        memberIDByUser[userID].flatMap { members[$0] }
    }

    func member(_ id: String) -> LiveMember? { members[id] }

    func add(_ member: LiveMember) {
        members[member.id] = member
        memberIDByUser[member.user.id] = member.id
    }

    func update(_ memberID: String, _ change: (inout LiveMember) -> Void) {
        guard var member = members[memberID] else { return }
        change(&member)
        members[memberID] = member
    }

    @discardableResult
    func remove(_ memberID: String) -> LiveMember? {
        guard let member = members.removeValue(forKey: memberID) else { return nil }
        memberIDByUser[member.user.id] = nil
        return member
    }

    /// Joined members in join order, as every list and reply presents them.
    var sortedMembers: [LiveMember] {
        members.values.sorted { ($0.joinedAt, $0.id) < ($1.joinedAt, $1.id) }
    }

    func attach(_ handle: ConnectionHandle, user userID: String) {
        attached[userID, default: []].insert(handle)
    }

    /// Detaches one connection; returns whether the user still has another attached here.
    func detach(_ handle: ConnectionHandle, user userID: String) -> Bool {
        attached[userID]?.remove(handle)
        if attached[userID]?.isEmpty ?? true {
            attached[userID] = nil
            return false
        }
        return true
    }

    /// Detaches every connection of a user; returns them.
    func detachAll(user userID: String) -> Set<ConnectionHandle> {
        attached.removeValue(forKey: userID) ?? []
    }

    func connections(of userID: String) -> Set<ConnectionHandle> { attached[userID] ?? [] }

    /// Every connection that receives the room's events: attached members' and watchers', each once.
    var allConnections: [ConnectionHandle] {
        let members = attached.values.flatMap { $0 }
        guard !watchers.isEmpty else { return members }
        let memberSet = Set(members)
        return members + watchers.filter { !memberSet.contains($0) }
    }

    func watch(_ handle: ConnectionHandle) { watchers.insert(handle) }

    func unwatch(_ handle: ConnectionHandle) { watchers.remove(handle) }

    var audioSenderCount: Int { members.values.reduce(0) { $0 + ($1.audioEnabled ? 1 : 0) } }

    var record: RoomRecord {
        RoomRecord(id: id, name: name, displayName: displayName, createdBy: createdBy, createdAt: createdAt, closedAt: nil,
                   ttl: ttl, maxMembers: maxMembers, memberCount: memberCount, lastEventID: lastEventID)
    }
}

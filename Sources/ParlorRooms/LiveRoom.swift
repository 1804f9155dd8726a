import ParlorBasics
import ParlorProtocol

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
    /// Memory only: recent chat messages and reactions, for their per-member rates.
    var messageWindow = RateWindow(StageRules.messageRate)
    var reactionWindow = RateWindow(StageRules.reactionRate)
    /// The address key of the connection that joined it (nil: loaded from the store or another node), which the
    /// per-address member cap counts.
    var address: String?
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
    let mode: RoomMode
    /// End-to-end encrypted (issue 40; LiveRoom+Encryption.swift): fixed at creation.
    let e2ee: Bool
    var locked: Bool
    /// Every user's role here, kept for the room's life (leaving does not reset it). Changed by `setRole`.
    private(set) var roles: [String: MemberRole] = [:]
    /// Users whose role here is moderator or speaker (the stage), kept with `roles`: a summary-mode room reads them
    /// on every join, so it never scans its audience for them.
    private(set) var stageUsers: Set<String> = []
    /// Users whose hand is up, with when they raised it (the queue's order). Changed by `setHand`.
    private(set) var hands: [String: Int64] = [:]
    /// The newest hand's time: hands queue by it, so it must increase even within a millisecond.
    var lastHandRaisedAt: Int64 = 0
    /// Bans by user id (expired ones are ignored, and dropped when met).
    var bans: [String: RoomBan] = [:]
    /// Memory only: recent chat and reactions per client address, for the per-address rates.
    var addressRates: [String: AddressRates] = [:]
    /// The creating client's address key (rooms.created_from), counted by the per-address cap.
    var createdFrom: String?
    var lastEventID: Int64
    var emptySince: Int64?
    var ttlTimer: RoomsTimer?
    /// The newest member's joined_at: members list in join order by it, so it must increase even within a millisecond.
    var lastJoinedAt: Int64 = 0
    /// Memory only: the presence mode its members were last told and the audience digest (RoomContext+Audience.swift).
    var presence = RoomPresence()
    /// The live stream: whether it is public (stored with the room) and who listens on this node (memory only;
    /// RoomsService+LiveStream.swift).
    var stream = RoomLiveStream()
    /// The recording running in the room, if any (RoomContext+Recording.swift).
    var recording: ActiveRecording?

    private(set) var members: [String: LiveMember] = [:]
    private(set) var memberIDByUser: [String: String] = [:]
    /// The members by (joinedAt, id), kept sorted as members come and go, each with its `MemberRecord.json`
    /// encoded once a list needed it (until the member, its role or its hand changes). A join reply lists the
    /// members in this order from these bytes: sorting the room and encoding every member on each join cost more
    /// than the rest of the reply.
    private(set) var joinOrder: [JoinSlot] = []

    struct JoinSlot {
        let id: String
        let joinedAt: Int64
        var encodedRecord: [UInt8]?
    }
    /// Users who became (true) or stopped being (false) JOINED members since the last `takeUserChanges()`:
    /// `LiveUsers` applies them after each batch instead of recounting the room.
    private(set) var userChanges: [(userID: String, joined: Bool)] = []
    /// A room object that `LiveUsers` has not counted yet (new, or reloaded from the store): counted whole once.
    private(set) var needsFullUserCount = true
    /// Connections receiving this room's events, by user id.
    private(set) var attached: [String: Set<ClientID>] = [:]
    /// Connections that receive this room's events without a membership (conversation:watch).
    private(set) var watchers: Set<ClientID> = []

    init(record: RoomRecord, emptySince: Int64?) {
        id = record.id
        name = record.name
        displayName = record.displayName
        createdBy = record.createdBy
        createdAt = record.createdAt
        ttl = record.ttl
        maxMembers = record.maxMembers
        mode = record.mode
        e2ee = record.e2ee
        locked = record.locked
        stream.isPublic = record.streamPublic
        lastEventID = record.lastEventID
        self.emptySince = emptySince
    }

    var memberCount: Int { members.count }

    func member(forUser userID: String) -> LiveMember? {
        memberIDByUser[userID].flatMap { members[$0] }
    }

    func member(_ id: String) -> LiveMember? { members[id] }

    func add(_ member: LiveMember) {
        if let previous = members[member.id] { joinOrder.remove(at: joinOrderPosition(of: previous)) }
        members[member.id] = member
        joinOrder.insert(JoinSlot(id: member.id, joinedAt: member.joinedAt), at: joinOrderIndex(joinedAt: member.joinedAt, id: member.id))
        if memberIDByUser.updateValue(member.id, forKey: member.user.id) == nil { userChanges.append((member.user.id, true)) }
    }

    func update(_ memberID: String, _ change: (inout LiveMember) -> Void) {
        guard var member = members[memberID] else { return }
        change(&member)
        joinOrder[joinOrderPosition(of: member)].encodedRecord = nil
        members[memberID] = member
    }

    @discardableResult
    func remove(_ memberID: String) -> LiveMember? {
        guard let member = members[memberID] else { return nil }
        joinOrder.remove(at: joinOrderPosition(of: member))
        members[memberID] = nil
        if memberIDByUser.removeValue(forKey: member.user.id) != nil { userChanges.append((member.user.id, false)) }
        return member
    }

    /// Joined members in join order, as every list and reply presents them.
    var sortedMembers: [LiveMember] { joinOrder.compactMap { members[$0.id] } }

    /// Where (joinedAt, id) is or would go in `joinOrder`: a binary search (a new member usually goes last).
    func joinOrderIndex(joinedAt: Int64, id: String) -> Int {
        var low = 0, high = joinOrder.count
        while low < high {
            let middle = (low + high) / 2
            if (joinOrder[middle].joinedAt, joinOrder[middle].id) < (joinedAt, id) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Where a member in `members` sits in `joinOrder`.
    func joinOrderPosition(of member: LiveMember) -> Int {
        let index = joinOrderIndex(joinedAt: member.joinedAt, id: member.id)
        if index < joinOrder.count, joinOrder[index].id == member.id { return index }
        preconditionFailure("joinOrder lost member \(member.id)")
    }

    /// The user changes recorded since the last call, in order; nil when the room must be counted whole.
    func takeUserChanges() -> [(userID: String, joined: Bool)]? {
        defer {
            userChanges.removeAll(keepingCapacity: true)
            needsFullUserCount = false
        }
        return needsFullUserCount ? nil : userChanges
    }

    func attach(_ clientID: ClientID, user userID: String) {
        attached[userID, default: []].insert(clientID)
    }

    /// Detaches one connection; returns whether the user still has another attached here.
    func detach(_ clientID: ClientID, user userID: String) -> Bool {
        attached[userID]?.remove(clientID)
        if attached[userID]?.isEmpty ?? true {
            attached[userID] = nil
            return false
        }
        return true
    }

    /// Detaches every connection of a user; returns them.
    func detachAll(user userID: String) -> Set<ClientID> {
        attached.removeValue(forKey: userID) ?? []
    }

    func connections(of userID: String) -> Set<ClientID> { attached[userID] ?? [] }

    /// Every connection that receives the room's events: attached members' and watchers', each once.
    var allConnections: [ClientID] {
        var clientIDs: [ClientID] = []
        forEachConnection { clientIDs.append($0) }
        return clientIDs
    }

    /// Calls `body` with every connection that receives the room's events, each once, without building a list
    /// (a broadcast, twice per join or leave, spent ~4,600 instructions on the list in rooms of 10). A watcher that
    /// is also an attached member was reached as one.
    func forEachConnection(_ body: (ClientID) -> Void) {
        for clientIDs in attached.values {
            for clientID in clientIDs { body(clientID) }
        }
        for clientID in watchers where !attached.values.contains(where: { $0.contains(clientID) }) { body(clientID) }
    }

    func watch(_ clientID: ClientID) { watchers.insert(clientID) }

    func unwatch(_ clientID: ClientID) { watchers.remove(clientID) }

    var audioSenderCount: Int { members.values.reduce(0) { $0 + ($1.audioEnabled ? 1 : 0) } }

    var record: RoomRecord {
        var record = RoomRecord(id: id, name: name, displayName: displayName, createdBy: createdBy, createdAt: createdAt, closedAt: nil,
                                ttl: ttl, maxMembers: maxMembers, memberCount: memberCount, lastEventID: lastEventID)
        record.mode = mode
        record.e2ee = e2ee
        record.locked = locked
        record.streamPublic = stream.isPublic
        return record
    }

    /// Roles, hands and bans as stored.
    func load(_ stage: RoomStage) {
        roles = stage.roles.mapValues(\.role)
        stageUsers = Set(roles.compactMap { $0.value == .listener ? nil : $0.key })
        hands = stage.roles.compactMapValues(\.handRaisedAt)
        lastHandRaisedAt = hands.values.max() ?? 0
        bans = stage.bans
        for index in joinOrder.indices { joinOrder[index].encodedRecord = nil }
    }

    func setRole(_ role: MemberRole, of userID: String) {
        roles[userID] = role
        if role == .listener { stageUsers.remove(userID) } else { stageUsers.insert(userID) }
        forgetEncodedRecord(ofUser: userID)
    }

    /// Raises (a time) or lowers (nil) a user's hand; returns when it had been raised.
    @discardableResult
    func setHand(raisedAt: Int64?, of userID: String) -> Int64? {
        let previous = hands[userID]
        hands[userID] = raisedAt
        forgetEncodedRecord(ofUser: userID)
        return previous
    }

    /// The encoded record of the member at `position` in `joinOrder`: cached, or encoded now and kept.
    func encodedRecord(at position: Int) -> [UInt8] {
        if let bytes = joinOrder[position].encodedRecord { return bytes }
        let bytes = members[joinOrder[position].id].map { record(of: $0).encoded() } ?? []
        joinOrder[position].encodedRecord = bytes
        return bytes
    }

    private func forgetEncodedRecord(ofUser userID: String) {
        guard let member = member(forUser: userID) else { return }
        joinOrder[joinOrderPosition(of: member)].encodedRecord = nil
    }

    /// A user's role here; users from before stage rooms existed are speakers.
    func role(of userID: String) -> MemberRole { roles[userID] ?? .speaker }

    /// A joined member as lists and replies show it, with its role and hand.
    func record(of member: LiveMember) -> MemberRecord {
        var record = MemberRecord(memberID: member.id, user: member.user, state: .joined, joinedAt: member.joinedAt, leftAt: nil,
                                  audioEnabled: member.audioEnabled, audioMuted: member.audioMuted)
        record.role = role(of: member.user.id)
        record.handRaisedAt = hands[member.user.id]
        return record
    }

    /// Joined members who may send audio (moderators and speakers), which a stage room counts against the sender cap.
    var stageSpeakerCount: Int { members.values.reduce(0) { $0 + (role(of: $1.user.id).maySpeak ? 1 : 0) } }

    /// Whether a joined member is a moderator.
    var hasModerator: Bool { members.values.contains { role(of: $0.user.id) == .moderator } }
}

extension LiveRoom {
    /// The one way a live room is built from storage: at start (one node or several), after a failed batch, and
    /// when another node changed it. The stored room with its stage (roles, hands, bans) and JOINED members; what
    /// lives only in memory comes from `previous`, the object it replaces: the connections attached to each member
    /// and the watchers. `member` makes each live member from its record and its previous live self, as the
    /// caller's situation decides (away since the start, or still counting down its grace period, …).
    convenience init(stored: StoredRoom, stage: RoomStage, emptySince: Int64?, createdFrom: String?, replacing previous: LiveRoom?,
                     member makeMember: (MemberRecord, _ previous: LiveMember?) -> LiveMember) {
        self.init(record: stored.record, emptySince: emptySince)
        self.createdFrom = createdFrom
        lastJoinedAt = stored.lastJoinedAt
        load(stage)
        for record in stored.members {
            add(makeMember(record, previous?.member(record.memberID)))
            for clientID in previous?.connections(of: record.user.id) ?? [] { attach(clientID, user: record.user.id) }
        }
        for clientID in previous?.watchers ?? [] { watch(clientID) }
        recording = previous?.recording
        if let previous {
            // The mode clients were told, and the digest less what the record says did not happen.
            presence = previous.presence
            // The listeners and the throttle are this node's; whether it is public is the record's (any node may change it).
            let isPublic = stream.isPublic
            stream = previous.stream
            stream.isPublic = isPublic
            presence.digest.keep { member($0) != nil }
        }
    }

    /// A stored room's empty-since as the start reads it: a room stored without one but with no members has been
    /// empty since it was created.
    static func emptySinceAtStart(_ stored: StoredRoom) -> Int64? {
        stored.emptySince ?? (stored.record.memberCount == 0 ? stored.record.createdAt : nil)
    }
}

extension LiveMember {
    /// A live member as its stored record has it, away since `disconnectedAt` (nil: present).
    init(_ record: MemberRecord, disconnectedAt: Int64?) {
        self.init(id: record.memberID, user: record.user, joinedAt: record.joinedAt, audioEnabled: record.audioEnabled,
                  audioMuted: record.audioMuted, disconnectedAt: disconnectedAt)
    }
}

import ParlorProtocol

/// How a stage room announces its members (issue 37): every join and leave to everyone (`full`), or, past
/// `--full-presence-limit` joined members, the stage in full and the audience as a count and a sample (`summary`).
enum PresenceMode: String {
    case full
    case summary

    /// The mode a room of `count` joined members takes from `current`: summary above `limit`, full again below
    /// 90 % of it (the gap keeps a room at the edge from switching at every join and leave).
    static func next(from current: PresenceMode, count: Int, limit: Int) -> PresenceMode {
        switch current {
        case .full: count > limit ? .summary : .full
        case .summary: count * 10 < limit * 9 ? .full : .summary
        }
    }
}

/// Listeners' joins and leaves since the last `room:audience`, coalesced: a listener who joined and left inside
/// one interval is in neither list. Its size is the joins and leaves of one interval, which the room's cap bounds.
struct AudienceDigest {
    /// Faces per list in one room:audience: at 500 joins a second a full list would be tens of KB a second per
    /// listener, a dozen is what an audience strip shows.
    static let sampleSize = 12

    private var joined: [String: (order: Int, user: User)] = [:]
    private var left: [String: Int] = [:]
    private var nextOrder = 0

    var isEmpty: Bool { joined.isEmpty && left.isEmpty }

    mutating func addJoin(_ memberID: String, user: User) {
        joined[memberID] = (nextOrder, user)
        nextOrder += 1
    }

    mutating func addLeave(_ memberID: String) {
        guard joined.removeValue(forKey: memberID) == nil else { return }
        left[memberID] = nextOrder
        nextOrder += 1
    }

    /// Keeps only what is still true of the room (after a failed batch reloaded it): joins of members still joined,
    /// leaves of members no longer joined.
    mutating func keep(isJoined: (String) -> Bool) {
        joined = joined.filter { isJoined($0.key) }
        left = left.filter { !isJoined($0.key) }
    }

    /// The body of a room:audience (`count`: the listeners now; `lastEventID`: every event up to it is accounted
    /// for, in this digest or delivered before), emptying the digest.
    mutating func take(count: Int, lastEventID: Int64) -> JSONObject {
        let joins = joined.sorted { $0.value.order < $1.value.order }
        let leaves = left.sorted { $0.value < $1.value }
        defer { self = AudienceDigest() }
        return [
            "count": JSONValue(Int64(count)),
            "joined": .array(joins.prefix(Self.sampleSize).map { ["member_id": .string($0.key), "user": $0.value.user.json] }),
            "left": .array(leaves.prefix(Self.sampleSize).map { .string($0.key) }),
            "joined_more": JSONValue(Int64(max(0, joins.count - Self.sampleSize))),
            "left_more": JSONValue(Int64(max(0, leaves.count - Self.sampleSize))),
            "last_event_id": JSONValue(lastEventID),
        ]
    }
}

/// A live room's presence, memory only: the mode its members were last told and the digest waiting for its timer.
struct RoomPresence {
    var mode = PresenceMode.full
    /// The mode as of the last committed batch (PresenceModeObserver): a batch that fails to commit sent no
    /// room:presence, so the room it reloads goes back to this one.
    var committedMode = PresenceMode.full
    var digest = AudienceDigest()
    /// Armed while the digest holds something: it sends the next room:audience.
    var timer: RoomsTimer?
}

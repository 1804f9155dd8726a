import ParlorProtocol

/// The stage-room rules that need no state: who gets which role on joining, who may do what, and the limits.
public enum StageRules {
    /// Chat: at most 5 messages in 10 s per member.
    public static let messageRate = RateWindow.Limit(count: 5, milliseconds: 10_000)
    /// Reactions: at most 10 in 10 s per member.
    public static let reactionRate = RateWindow.Limit(count: 10, milliseconds: 10_000)
    /// A ban lasts 1 s to 30 days.
    public static let banSeconds: ClosedRange<Int64> = 1...2_592_000

    /// The role of a user the room has not seen before. A stage room's creator moderates; a stage room without a
    /// creator (created without a token before POST /rooms required one for stage rooms) lets its first member
    /// moderate. In an open room everyone speaks and the creator moderates.
    public static func initialRole(mode: RoomMode, isCreator: Bool, roomHasCreator: Bool, roomHasRoles: Bool) -> MemberRole {
        if isCreator { return .moderator }
        switch mode {
        case .open: return .speaker
        case .stage: return !roomHasCreator && !roomHasRoles ? .moderator : .listener
        }
    }

    /// Whether a member may turn its audio on.
    public static func mayEnableAudio(_ role: MemberRole) -> Bool { role.maySpeak }

    /// Whether a ban refuses a join: the user's own ban, or, for a user the room has never seen, a ban of an
    /// address it connects from (so a new name from the same place does not get in either).
    public static func refusingBan(userID: String, address: String?, knownToRoom: Bool, bans: some Collection<RoomBan>,
                                   at now: Int64) -> RoomBan? {
        bans.first { ban in
            guard ban.until > now else { return false }
            if ban.userID == userID { return true }
            guard !knownToRoom, let address else { return false }
            return ban.clientAddresses.contains(address)
        }
    }
}

/// A sliding window of recent actions: at most `count` within `milliseconds`.
public struct RateWindow: Sendable {
    public struct Limit: Sendable {
        public let count: Int
        public let milliseconds: Int64
    }

    public let limit: Limit
    private var times: [Int64] = []

    public init(_ limit: Limit) { self.limit = limit }

    /// Whether an action at `now` would be admitted (nothing is recorded).
    public func hasRoom(at now: Int64) -> Bool { times.lazy.filter { $0 > now - limit.milliseconds }.count < limit.count }

    /// Whether no action of the window is recent any more at `now` (it can be forgotten).
    public func isIdle(at now: Int64) -> Bool { times.allSatisfy { $0 <= now - limit.milliseconds } }

    /// Records an action at `now` if the window has room for it; false (nothing recorded) when it does not.
    public mutating func admit(at now: Int64) -> Bool {
        times.removeAll { $0 <= now - limit.milliseconds }
        guard times.count < limit.count else { return false }
        times.append(now)
        return true
    }
}

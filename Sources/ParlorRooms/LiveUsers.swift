import ParlorBasics

/// Which users are in live use: with an open WebSocket session, or a JOINED member of an open room (attached, or
/// within its grace period). POST /auth reads it from a loop thread (a name in live use is not handed to someone
/// without its claim); the rooms thread, which owns what it mirrors, keeps it up to date after each batch.
public final class LiveUsers: Sendable {
    private struct State {
        /// Per user: open sessions plus rooms where the user is a JOINED member. Absent means zero.
        var counts: [String: Int] = [:]
        /// The JOINED users of each open room as last counted.
        var roomMembers: [String: Set<String>] = [:]
    }

    private let state = Locked<State>(State())

    public init() {}

    public func contains(_ userID: String) -> Bool {
        state.withLock { $0.counts[userID] != nil }
    }

    func connectionOpened(_ userID: String) {
        state.withLock { Self.add(1, to: userID, in: &$0.counts) }
    }

    func connectionClosed(_ userID: String) {
        state.withLock { Self.add(-1, to: userID, in: &$0.counts) }
    }

    /// Applies a room's membership changes in order (`LiveRoom.takeUserChanges`); a change that is already true
    /// (a join of a counted user, a leave of an uncounted one) changes nothing.
    func apply(room roomID: String, _ changes: [(userID: String, joined: Bool)]) {
        guard !changes.isEmpty else { return }
        state.withLock { state in
            // The room's set is changed where it lies (removing it and storing it back hashed the room id twice
            // and the set's buffer moved each time: ~5,500 instructions a batch in callgrind).
            let emptied = Self.apply(changes, to: &state.roomMembers[roomID, default: []], counts: &state.counts)
            if emptied { state.roomMembers[roomID] = nil }
        }
    }

    /// Applies `changes` to one room's members and the counts; true when the room has no JOINED user left.
    private static func apply(_ changes: [(userID: String, joined: Bool)], to members: inout Set<String>,
                              counts: inout [String: Int]) -> Bool {
        for change in changes {
            if change.joined {
                if members.insert(change.userID).inserted { add(1, to: change.userID, in: &counts) }
            } else if members.remove(change.userID) != nil {
                add(-1, to: change.userID, in: &counts)
            }
        }
        return members.isEmpty
    }

    /// Counts a room's JOINED users afresh (empty for a room that is gone), changing only users that came or went.
    func sync(room roomID: String, members: Set<String>) {
        state.withLock { state in
            let previous = state.roomMembers[roomID] ?? []
            guard previous != members else { return }
            for userID in previous.subtracting(members) { Self.add(-1, to: userID, in: &state.counts) }
            for userID in members.subtracting(previous) { Self.add(1, to: userID, in: &state.counts) }
            state.roomMembers[roomID] = members.isEmpty ? nil : members
        }
    }

    /// One hash lookup whether the user's count grows, shrinks or ends.
    private static func add(_ delta: Int, to userID: String, in counts: inout [String: Int]) {
        guard let index = counts.index(forKey: userID) else {
            if delta > 0 { counts[userID] = delta }
            return
        }
        let count = counts.values[index] + delta
        if count > 0 { counts.values[index] = count } else { counts.remove(at: index) }
    }
}

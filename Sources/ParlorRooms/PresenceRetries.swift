import ParlorBasics

/// A presence change that must reach the database, whatever it takes: a member whose connection dropped while the
/// disk was full would otherwise stay JOINED (a ghost) until a restart.
struct Settlement: Sendable {
    /// The connection that closed, if this is its disconnect: its session ends and it is detached everywhere.
    var client: ClientRef?
    let userID: String
    /// When the user was last connected: the grace period runs from here.
    let awaySince: Int64
    let roomIDs: [String]
}

/// Presence changes (a disconnect, a drop at the end of a grace period) that did not commit are tried again as a
/// `settle` command, after a backoff, until one commits: the batch says which failed (`retryOnFailure`, before each
/// command runs), the `RetryObserver` schedules them, and `settle` brings the memberships to where the failed change
/// would have left them. Confined to the rooms thread (the service calls it there; it asserts so in debug builds),
/// so it is not Sendable.
final class PresenceRetries {
    /// The clock, the grace period, the logger and the rooms of the rooms thread.
    private let rules: RoomRules
    private let clientSessions: ClientSessions
    /// With several nodes, another node may hold the member: its attachment decides, not this node's timers.
    private let clustered: Bool
    /// Queues the retry (`RoomsService.Command.settle`); set once by the service before its thread starts.
    var due: (Settlement, _ attempt: Int) -> Void = { _, _ in }

    init(rules: RoomRules, clientSessions: ClientSessions, clustered: Bool) {
        self.rules = rules
        self.clientSessions = clientSessions
        self.clustered = clustered
    }

    /// What to try again if `command` does not commit; computed before it runs, from the state it starts from.
    func retryOnFailure(of command: RoomsService.Command) -> (Settlement, attempt: Int)? {
        let state = rules.state
        let now = rules.clock.now()
        switch command {
        case .disconnected(let client):
            let roomIDs = state.clients[client.id].map { Array($0.rooms) } ?? []
            return (Settlement(client: client, userID: client.user.id, awaySince: now, roomIDs: roomIDs), 1)
        case .dropIfStillAway(let roomID, let memberID):
            guard let member = state.rooms[roomID]?.member(memberID) else { return nil }
            let awaySince = member.disconnectedAt ?? now - Int64(rules.configuration.gracePeriod.seconds * 1000)
            return (Settlement(client: nil, userID: member.user.id, awaySince: awaySince, roomIDs: [roomID]), 1)
        case .settle(let settlement, let attempt):
            return (settlement, attempt + 1)
        default:
            return nil
        }
    }

    /// Tries again after a backoff: 100 ms, doubling to at most 5 s, until it commits.
    func schedule(_ settlement: Settlement, attempt: Int) {
        let delay = min(5_000, 50 << min(attempt, 7))
        if attempt == 1 || attempt % 20 == 0 {
            rules.logger.warning("a presence change did not commit; retrying", ["user": settlement.userID, "attempt": String(attempt)])
        }
        _ = rules.clock.schedule(after: .milliseconds(delay)) { [weak self] in
            self?.due(settlement, attempt)
        }
    }

    /// Brings the user's memberships in `roomIDs` to where the failed change would have left them: the closed
    /// connection detached and its session ended; each member with no connection left is away (with its drop
    /// timer), or dropped once its grace period has passed.
    func settle(_ settlement: Settlement, _ step: inout Step) throws {
        let state = rules.state
        let now = rules.clock.now()
        if let client = settlement.client {
            // Still known if the failed batch never ran: this does what its disconnect would have done.
            try clientSessions.disconnected(client, &step)
            // And wherever the failure stopped it halfway, the closed connection must not count as present.
            for roomID in settlement.roomIDs { _ = state.rooms[roomID]?.detach(client.id, user: client.user.id) }
            try step.store.endSession(id: client.sessionID, at: settlement.awaySince)
        }
        let dueAt = settlement.awaySince + Int64(rules.configuration.gracePeriod.seconds * 1000)
        for roomID in settlement.roomIDs {
            guard let room = state.rooms[roomID], let member = room.member(forUser: settlement.userID),
                  room.connections(of: settlement.userID).isEmpty else { continue }
            let context = step.context(of: room)
            if clustered {
                // This node's attachment goes too; another node may still have the member attached (then it stays).
                // A drop already due comes from the timer, in the next batch, by the node holding the member.
                try step.rules.attachments.lastConnectionDetached(member, in: room, at: member.disconnectedAt ?? settlement.awaySince, &step)
                continue
            }
            if now >= dueAt {
                guard try step.rules.attachments.allowDrop(member.id, step.store) else { continue }
                try context.end(member, reason: .dropped, &step)
                continue
            }
            let awaySince = member.disconnectedAt ?? settlement.awaySince
            try step.store.setDisconnected(memberID: member.id, since: awaySince)
            room.update(member.id) { $0.disconnectedAt = awaySince }
            if member.dropTimer == nil { step.rules.timers.scheduleDrop(member.id, in: room, after: .milliseconds(Int(dueAt - now))) }
        }
    }
}

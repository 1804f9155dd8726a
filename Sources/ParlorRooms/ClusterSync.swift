import ParlorBasics
import ParlorProtocol

/// Several nodes on one database (a `ClusterLink` given): before a command uses a room, the rooms thread brings
/// that room up to date with what other nodes committed — inside the batch's transaction, holding the room's row
/// when the command may change it — so decisions (max_members, joins, drops) are made on the current record, and
/// the events this node's connections have not seen go out first, in id order, before anything the command adds.
///
/// Confined to the rooms thread, like the `RoomsState` it looks rooms and clients up in (not Sendable); it owns the
/// per-room delivered cursors and the batch's bookkeeping. The rooms service holds one only with several nodes.
/// Catching up (ClusterSync+Rooms.swift, ClusterSync+CatchUp.swift) changes the live rooms as the record says;
/// what a room's rules decide besides (its timers, a member's departure) stays theirs (`RoomRules`), closing a user's
/// connections the service's (`ClusterOperations`), and the media homes' theirs (`ClusterMediaHomes`).
final class ClusterSync {
    /// The other nodes: their notifications, and this node's lease.
    let link: any ClusterLink
    let store: any RoomStore
    /// Told, on the rooms thread, of users whose tokens or claim changed on some node.
    private let userChanged: (@Sendable (String) -> Void)?
    /// What the catch-up works with and leaves to others, wired once at the service's start (`wire`): the rooms'
    /// rules (the clock, the configuration, the logger, the live rooms and clients, the rooms-thread check, the
    /// timers, a command's step), the directory of rooms (the newest creation, stale rooms, the ttl limit), the
    /// operations of the service (closing a revoked user's connections) and the media homes. The service owns them
    /// and this object, so they outlive it.
    private(set) unowned var rules: RoomRules!
    private(set) unowned var directory: RoomDirectory!
    private(set) unowned var operations: (any ClusterOperations)!
    private(set) unowned var mediaHomes: (any ClusterMediaHomes)!

    /// Per room, the last event id this node's connections were sent.
    var delivered: [String: Int64] = [:]
    /// Rooms brought up to date in the batch in progress, and their cursors from before it (restored if it fails).
    var synced: Set<String> = []
    var undo: [String: Int64?] = [:]
    /// The heads of the rooms the batch in progress locked at its start, each taken by the room's first catch-up.
    var lockedHeads: [String: (lastEventID: Int64, closed: Bool)] = [:]
    /// Catch-ups applied from the events (ClusterSync+CatchUp.swift), and those that could have been but read the
    /// room back whole instead (not counting resyncs and takeovers, which always do): for tests.
    var appliedCatchUps = 0
    var reloadedCatchUps = 0

    init(link: any ClusterLink, store: any RoomStore, userChanged: (@Sendable (String) -> Void)?) {
        self.link = link
        self.store = store
        self.userChanged = userChanged
    }

    /// What the catch-up calls (see the properties), once the service has made them.
    func wire(rules: RoomRules, directory: RoomDirectory, operations: any ClusterOperations, mediaHomes: any ClusterMediaHomes) {
        self.rules = rules
        self.directory = directory
        self.operations = operations
        self.mediaHomes = mediaHomes
    }

    /// At start, on the rooms thread: listens before loading (whatever commits after the load is signalled, handled
    /// after this task), registers this node, loads the open rooms as stored (every node's members, with their
    /// stored presence), and asks for a takeover of nodes whose lease has ended — this node's previous run among
    /// them. Members of live nodes are theirs: nothing is marked away here.
    func start(signalled: @escaping @Sendable (ClusterSignal) -> Void) throws {
        rules.assertOnRoomsThread()
        try link.start(signalled)
        do { try loadOpenRooms() } catch { link.stop(); throw error }
        signalled(.nodesExpired)
    }

    private func loadOpenRooms() throws {
        let now = rules.clock.now()
        let lease = Int64(rules.configuration.nodeLease.seconds * 1000)
        let (openRooms, latestCreatedAt) = try store.write { transaction in
            guard let transaction = transaction as? any ClusterTransaction else {
                throw RoomError(.serverInternal, "this store cannot be shared by several nodes")
            }
            try transaction.registerNode(lease: lease)
            try mediaHomes.registerMediaAddress(transaction)
            try directory.limitStoredRooms(transaction)
            let rooms = try transaction.openRoomStates().map { stored in
                (stored, try transaction.stage(roomID: stored.record.id, at: now), try transaction.presence(roomID: stored.record.id))
            }
            return (rooms, try transaction.latestRoomCreatedAt())
        }
        for (stored, stage, presence) in openRooms {
            // Every node's members, with their stored presence.
            let room = LiveRoom(stored: stored, stage: stage, emptySince: LiveRoom.emptySinceAtStart(stored), createdFrom: stored.createdFrom,
                                replacing: nil) { record, _ in LiveMember(record, disconnectedAt: presence[record.memberID]?.disconnectedAt) }
            rules.state.rooms[room.id] = room
            delivered[room.id] = room.lastEventID
            if room.memberCount == 0 { rules.timers.scheduleExpiry(of: room) }
        }
        directory.lastRoomCreatedAt = latestCreatedAt
    }

    /// At the start of a batch: locks the rows of every known room its commands may change, in id order, so two
    /// nodes' batches never hold one room each while waiting for the other's (a deadlock PostgreSQL would break by
    /// failing a command). Rooms not known here yet are locked when their command comes.
    func lockRooms(of commands: [RoomsService.Command], in transaction: any RoomTransaction) throws {
        rules.assertOnRoomsThread()
        guard let transaction = transaction as? any ClusterTransaction else { return }
        var ids = Set<String>()
        for command in commands {
            let (rooms, lock, _) = roomsTouched(by: command)
            if lock { ids.formUnion((rooms ?? Array(rules.state.rooms.keys)).filter { rules.state.rooms[$0] != nil }) }
        }
        // The heads come with the locks: no other node changes these rooms before the commit, so each room's first
        // catch-up in the batch needs no read of its own.
        if !ids.isEmpty { lockedHeads = try transaction.lockRooms(ids.sorted()) }
    }

    /// Runs before `command` in the batch's transaction, outside its savepoint: what it delivers and loads stays
    /// even if the command is refused (those events are committed already). In savepoints: a failure (a deadlock
    /// on a room's row with another node) fails the command, as a failure inside it would.
    func prepare(for command: RoomsService.Command, in transaction: any RoomTransaction, batch: inout Batch) throws {
        rules.assertOnRoomsThread()
        guard let transaction = transaction as? any ClusterTransaction else { return }
        switch command {
        case .cluster(.resync):
            try resync(transaction, &batch)
        case .cluster(.nodesExpired):
            try takeOver(transaction, &batch)
            try mediaHomes.releaseMediaHomes(transaction, &batch)
        case .cluster(.mediaHome(let signal)):
            try mediaHomes.handleMediaHome(signal, transaction, &batch)
        case .cluster(.unstored(let node, let roomID, let message)):
            guard node != transaction.nodeID, let room = rules.state.rooms[roomID] else { return }
            batch.broadcast(message, in: room)
        case .cluster(.signals):
            try deliverSignals(transaction, &batch)
        case .cluster(.roomChanged) where isRedundantNotification(command):
            return  // this node's own event, or one an earlier catch-up brought: nothing to read
        case .cluster(.leaseLost):
            try transaction.withSavepoint { try claimBackAttached(transaction, &batch) }
        case .operation(.createRoom, _):
            // The limits on open rooms (in all, per user, per address) are counted on the live rooms: under the lock
            // no other node creates a room until this batch commits, and the live rooms are first made the open ones.
            try transaction.withSavepoint {
                try transaction.lockRoomCreation()
                let open = Set(try transaction.openRoomIDs())
                for roomID in open.symmetricDifference(rules.state.rooms.keys).sorted() { try sync(roomID, lock: false, transaction, &batch) }
            }
        case .cluster(.userChanged(let userID, let revoked)):
            userChanged?(userID)
            guard revoked else { return }
            // The node that revoked ended the memberships; this one closes the user's connections here (4003).
            for room in rules.state.rooms.values.filter({ $0.member(forUser: userID) != nil }).map(\.id).sorted() {
                try sync(room, lock: true, transaction, &batch)
            }
            var step = Step(store: transaction, batch: Batch(), rules: rules)
            _ = try transaction.withSavepoint { try operations.run(.disconnectUser(userIDs: [userID], reason: "token revoked"), &step) }
            batch.merge(step.batch)
        default:
            let (rooms, lock, claimFor) = roomsTouched(by: command)
            func catchUp() throws {
                for roomID in rooms ?? rules.state.rooms.keys.sorted() {
                    try sync(roomID, lock: lock, apply: true, transaction, &batch)
                    if let userID = claimFor { try claim(userID, in: roomID, transaction) }
                }
            }
            // In a savepoint when it locks or writes: a lock that fails (a deadlock with another node) fails this
            // command, not the batch. Reads alone (a notification, a members list) cannot deadlock: no savepoint,
            // two round trips fewer.
            if lock || claimFor != nil { try transaction.withSavepoint(catchUp) } else { try catchUp() }
        }
    }

    /// Whether `command` notifies an event (not a creation or close) that the room's copy here holds and this node's
    /// connections were sent: an event this node stored, or one already caught up.
    func isRedundantNotification(_ command: RoomsService.Command) -> Bool {
        rules.assertOnRoomsThread()
        guard case .cluster(.roomChanged(let roomID, let eventID?)) = command, eventID > 0, let live = rules.state.rooms[roomID],
              !directory.staleRooms.contains(roomID) else { return false }
        return live.lastEventID >= eventID && (delivered[roomID] ?? 0) >= eventID
    }

    /// Whether the member may be dropped now: only by the node holding it, while it is still away in the record
    /// (not resumed on another node).
    func allowsDrop(_ memberID: String, _ transaction: any RoomTransaction) throws -> Bool {
        rules.assertOnRoomsThread()
        guard let transaction = transaction as? any ClusterTransaction else { return true }
        return try transaction.mayDrop(memberID: memberID, disconnectedAtOrBefore: rules.clock.now())
    }

    /// After each batch (and the reload of rooms a failure touched): committed, every synced or touched room was
    /// delivered through its last event id; not committed, nothing of it went out, so the cursors go back.
    func finishBatch(changedRooms: Set<String>, committed: Bool) {
        rules.assertOnRoomsThread()
        defer {
            lockedHeads.removeAll()
            synced.removeAll(keepingCapacity: true)
            undo.removeAll(keepingCapacity: true)
        }
        guard committed else {
            for (roomID, previous) in undo { delivered[roomID] = previous }
            return
        }
        for roomID in synced.union(changedRooms) {
            delivered[roomID] = rules.state.rooms[roomID]?.lastEventID
        }
    }

    /// Which rooms a command reads or changes, and whether it claims the caller's membership (join and resume make
    /// this node the holder). nil: every room.
    private func roomsTouched(by command: RoomsService.Command) -> (rooms: [String]?, lock: Bool, claimFor: String?) {
        switch command {
        case .connect, .closeAfterReplies, .expireSessions:
            return ([], false, nil)
        case .request(let client, _, let request):
            switch request {
            case .join(let cid, _): return ([cid], true, client.user.id)
            case .resume(_, let last): return (last.map(\.cid).sorted(), true, client.user.id)
            case .leave(let cid), .media(let cid, _), .stage(let cid, _), .mediaOffer(let cid, _, _), .mediaClose(let cid),
                 .record(let cid, _, _), .streamPublic(let cid, _):
                return ([cid], true, nil)
            case .members(let cid, _), .events(let cid, _, _), .signal(_, let cid, _, _), .watch(let cid),
                 .e2eeKey(let cid, _):
                return ([cid], false, nil)  // they change nothing stored in the room: no need to hold its row
            case .unwatch, .ping:
                return ([], false, nil)
            }
        case .disconnected(let client):
            return ((rules.state.clients[client.id]?.rooms).map { $0.sorted() } ?? [], true, nil)
        case .operation(let operation, _):
            switch operation {
            case .createRoom: return ([], false, nil)
            case .closeRoom(let roomID, _), .kick(let roomID, _), .mute(let roomID, _), .moderate(let roomID, _, _),
                 .dropConnections(let roomID, _), .startRecording(let roomID, _), .stopRecording(let roomID, _, _):
                return ([roomID], true, nil)
            case .listRecordings(let roomID, _): return ([roomID], false, nil)
            case .liveStreamAccess(let roomID, _): return ([roomID], true, nil)  // may choose the room's media home
            case .findRecording, .deleteRecording, .expireRecordings: return ([], false, nil)  // rows only, no room
            case .disconnectUser, .reset: return (nil, true, nil)
            }
        case .dropIfStillAway(let roomID, _), .closeIfExpired(let roomID):
            return ([roomID], true, nil)
        case .sendAudience(let roomID), .liveListeners(let roomID, _), .sendStreamStatus(let roomID):
            return ([roomID], false, nil)  // brought up to date first, so the digest holds every event before it
        case .settle(let settlement, _):
            return (settlement.roomIDs.sorted(), true, nil)
        case .mediaEvent(.speaking(let roomID, _, _)):
            return ([roomID], false, nil)
        case .mediaEvent(.slots), .mediaEvent(.ended):
            return ([], false, nil)
        case .recordingEnded:
            return (nil, true, nil)  // its room is in the row; rare enough to hold every room once
        case .cluster(.roomChanged(let roomID, _)):
            return ([roomID], false, nil)
        case .cluster(.resync), .cluster(.nodesExpired), .cluster(.signals), .cluster(.userChanged), .cluster(.leaseLost),
             .cluster(.mediaHome), .cluster(.unstored):
            return ([], false, nil)  // handled in prepare(for:)
        }
    }
}

extension RoomsService.Command {
    /// Handled whole by `ClusterSync.prepare(for:)`, with nothing left for the command itself.
    var isClusterSignal: Bool {
        if case .cluster = self { return true }
        return false
    }
}

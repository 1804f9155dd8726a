import ParlorBasics
import ParlorProtocol

/// Several nodes on one database (a `ClusterLink` given): before a command uses a room, the rooms thread brings
/// that room up to date with what other nodes committed — inside the batch's transaction, holding the room's row
/// when the command may change it — so decisions (max_members, joins, drops) are made on the current record, and
/// the events this node's connections have not seen go out first, in id order, before anything the command adds.
extension RoomsService.Command {
    /// Handled whole by `prepare(forCluster:)`, with nothing left for the command itself.
    var isClusterSignal: Bool {
        if case .cluster = self { return true }
        return false
    }
}

extension RoomsService {
    /// Which rooms a command reads or changes, and whether it claims the caller's membership (join and resume make
    /// this node the holder). nil: every room.
    private func clusterRooms(of command: Command) -> (rooms: [String]?, lock: Bool, claimFor: String?) {
        switch command {
        case .connect, .closeAfterReplies, .expireSessions:
            return ([], false, nil)
        case .request(let client, _, let request):
            switch request {
            case .join(let cid): return ([cid], true, client.user.id)
            case .resume(_, let last): return (last.map(\.cid).sorted(), true, client.user.id)
            case .leave(let cid), .media(let cid, _), .stage(let cid, _), .mediaOffer(let cid, _), .mediaClose(let cid):
                return ([cid], true, nil)
            case .members(let cid, _), .events(let cid, _, _), .signal(_, let cid, _, _), .watch(let cid):
                return ([cid], false, nil)  // they change nothing stored in the room: no need to hold its row
            case .unwatch, .ping:
                return ([], false, nil)
            }
        case .disconnected(let client):
            return ((state.clients[client.id]?.rooms).map { $0.sorted() } ?? [], true, nil)
        case .operation(let operation, _):
            switch operation {
            case .createRoom: return ([], false, nil)
            case .closeRoom(let roomID, _), .kick(let roomID, _), .mute(let roomID, _), .moderate(let roomID, _, _),
                 .dropConnections(let roomID, _):
                return ([roomID], true, nil)
            case .disconnectUser, .reset: return (nil, true, nil)
            }
        case .dropIfStillAway(let roomID, _), .closeIfExpired(let roomID):
            return ([roomID], true, nil)
        case .settle(let settlement, _):
            return (settlement.roomIDs.sorted(), true, nil)
        case .mediaEvent(.speaking(let roomID, _, _)):
            return ([roomID], false, nil)
        case .mediaEvent(.slots), .mediaEvent(.ended):
            return ([], false, nil)
        case .cluster(.roomChanged(let roomID, _)):
            return ([roomID], false, nil)
        case .cluster(.resync), .cluster(.nodesExpired), .cluster(.signals), .cluster(.userChanged), .cluster(.leaseLost),
             .cluster(.mediaHome):
            return ([], false, nil)  // handled in prepare(forCluster:)
        }
    }

    /// At the start of a batch: locks the rows of every known room its commands may change, in id order, so two
    /// nodes' batches never hold one room each while waiting for the other's (a deadlock PostgreSQL would break by
    /// failing a command). Rooms not known here yet are locked when their command comes.
    func lockRooms(of commands: [Command], in transaction: any RoomTransaction) throws {
        assertOnRoomsThread()
        guard let transaction = transaction as? any ClusterTransaction else { return }
        var ids = Set<String>()
        for command in commands {
            let (rooms, lock, _) = clusterRooms(of: command)
            if lock { ids.formUnion((rooms ?? Array(state.rooms.keys)).filter { state.rooms[$0] != nil }) }
        }
        // The heads come with the locks: no other node changes these rooms before the commit, so each room's first
        // catch-up in the batch needs no read of its own.
        if !ids.isEmpty { state.clusterLockedHeads = try transaction.lockRooms(ids.sorted()) }
    }

    /// Runs before `command` in the batch's transaction, outside its savepoint: what it delivers and loads stays
    /// even if the command is refused (those events are committed already). In savepoints: a failure (a deadlock
    /// on a room's row with another node) fails the command, as a failure inside it would.
    func prepare(forCluster command: Command, in transaction: any RoomTransaction, batch: inout Batch) throws {
        assertOnRoomsThread()
        guard let transaction = transaction as? any ClusterTransaction else { return }
        switch command {
        case .cluster(.resync):
            try resync(transaction, &batch)
        case .cluster(.nodesExpired):
            try takeOver(transaction, &batch)
            try releaseMediaHomes(transaction, &batch)
        case .cluster(.mediaHome(let signal)):
            try handleMediaHome(signal, transaction, &batch)
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
                for roomID in open.symmetricDifference(state.rooms.keys).sorted() { try sync(roomID, lock: false, transaction, &batch) }
            }
        case .cluster(.userChanged(let userID, let revoked)):
            state.clusterUserObserver?(userID)
            guard revoked else { return }
            // The node that revoked ended the memberships; this one closes the user's connections here (4003).
            for room in state.rooms.values.filter({ $0.member(forUser: userID) != nil }).map(\.id).sorted() {
                try sync(room, lock: true, transaction, &batch)
            }
            var step = Step(store: transaction, batch: Batch(), rules: rules)
            _ = try transaction.withSavepoint { try run(.disconnectUser(userIDs: [userID], reason: "token revoked"), &step) }
            batch.merge(step.batch)
        default:
            let (rooms, lock, claimFor) = clusterRooms(of: command)
            func catchUp() throws {
                for roomID in rooms ?? state.rooms.keys.sorted() {
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

    /// Through which event id this node's connections were sent the room's events. Within a batch, a room synced
    /// earlier had everything up to the head then queued, and every command since queued its own events; a command
    /// that failed may have left the live id ahead of the record, hence the smaller of the two.
    private func deliveredThrough(_ roomID: String, live: LiveRoom, head: Int64) -> Int64 {
        if state.clusterSynced.contains(roomID) { return min(live.lastEventID, head) }
        return state.clusterDelivered[roomID] ?? live.lastEventID
    }

    /// Whether `command` notifies an event (not a creation or close) that the room's copy here holds and this node's
    /// connections were sent: an event this node stored, or one already caught up.
    func isRedundantNotification(_ command: Command) -> Bool {
        assertOnRoomsThread()
        guard case .cluster(.roomChanged(let roomID, let eventID?)) = command, eventID > 0, let live = state.rooms[roomID],
              !roomDirectory.staleRooms.contains(roomID) else { return false }
        return live.lastEventID >= eventID && (state.clusterDelivered[roomID] ?? 0) >= eventID
    }

    /// Records what was queued, keeping the value from before the batch in case the batch does not commit.
    private func setDelivered(_ roomID: String, _ id: Int64?) {
        if state.clusterUndo[roomID] == nil { state.clusterUndo[roomID] = .some(state.clusterDelivered[roomID]) }
        state.clusterDelivered[roomID] = id
    }

    /// Brings one room up to date: delivers the events committed since what this node delivered, to the connections
    /// attached here, and reloads the room when its record moved on (or loads it, or forgets it once closed).
    /// `apply`: the new events may be applied to the live room instead of reading it back (RoomsService+ClusterCatchUp.swift);
    /// false after a lost link or a takeover, where the record may have changed without an event.
    func sync(_ roomID: String, lock: Bool, apply: Bool = false, _ transaction: any ClusterTransaction, _ batch: inout Batch) throws {
        let live = state.rooms[roomID]
        guard let head = try state.clusterLockedHeads.removeValue(forKey: roomID) ?? transaction.roomHead(id: roomID, lock: lock) else {
            return
        }
        defer { state.clusterSynced.insert(roomID) }
        // Who receives the room here now: members whose membership ended elsewhere still get their member:left.
        let receivers = live?.allConnections ?? []
        let delivered = live.map { deliveredThrough(roomID, live: $0, head: head.lastEventID) } ?? head.lastEventID
        var target = head.lastEventID
        // Events read once for applying and delivering: those after `read` up to the head.
        var read = delivered
        var events: [EventRecord] = []
        if head.closed {
            if let live { forget(live) }
            batch.caughtUp(roomID)
        } else if let live, live.lastEventID == head.lastEventID {
            // Up to date: nothing to load.
        } else {
            batch.caughtUp(roomID)
            var applied = false
            // Not after a failed command (the room is read back after the batch), nor past a long gap.
            if apply, let live, !batch.roomsToReload.contains(roomID), live.lastEventID < head.lastEventID,
               head.lastEventID - min(delivered, live.lastEventID) <= Int64(Self.catchUpLimit) {
                read = min(delivered, live.lastEventID)
                events = try transaction.events(roomID: roomID, since: read, pageSize: Int(head.lastEventID - read))
                    .items.filter { $0.id <= target }
                let new = events.filter { $0.id > live.lastEventID }
                applied = canApply(new, to: live, head: head.lastEventID) && applyCaughtUp(new, to: live)
                if applied { state.clusterApplied += 1 }
            }
            if !applied {
                if apply { state.clusterReloads += 1 }
                try reload(roomID, previous: live, transaction)
                // Without the row lock a commit may land between the statements: the reload may be newer than the head.
                target = max(target, state.rooms[roomID]?.lastEventID ?? target)
            }
        }
        if !receivers.isEmpty {
            for event in events where event.id > delivered {
                let message = ProtocolMessage.event(event)
                for clientID in receivers { batch.outbox.sendEvent(message, to: clientID) }
            }
            var since = max(delivered, events.last?.id ?? read)
            while since < target {
                let page = try transaction.events(roomID: roomID, since: since, pageSize: 500)
                for event in page.items where event.id <= target {
                    let message = ProtocolMessage.event(event)
                    for clientID in receivers { batch.outbox.sendEvent(message, to: clientID) }
                }
                guard let last = page.items.last else { break }
                since = last.id
            }
        }
        setDelivered(roomID, head.closed ? nil : target)
    }

    /// The room as stored, keeping what lives only here: attached connections, watchers, timers, rate windows.
    func reload(_ roomID: String, previous: LiveRoom?, _ transaction: any ClusterTransaction) throws {
        let now = clock.now()
        guard let stored = try transaction.openRoomState(id: roomID) else {
            if let previous { forget(previous) }
            return
        }
        let stage = try transaction.stage(roomID: roomID, at: now)
        let presence = try transaction.presence(roomID: roomID)
        // Members as stored, each keeping what lives only here (timers, rate windows) from before.
        let room = LiveRoom(stored: stored, stage: stage, emptySince: stored.emptySince, createdFrom: stored.createdFrom,
                            replacing: previous) { record, previous in
            var member = previous ?? LiveMember(id: record.memberID, user: record.user, joinedAt: record.joinedAt)
            member.audioEnabled = record.audioEnabled
            member.audioMuted = record.audioMuted
            member.disconnectedAt = presence[record.memberID]?.disconnectedAt
            return member
        }
        if let previous {
            // Members that ended elsewhere: their timers stop, their connections here no longer receive the room.
            for member in previous.sortedMembers where room.member(member.id) == nil {
                if let timer = member.dropTimer { clock.cancel(timer) }
                for clientID in previous.connections(of: member.user.id) { state.clients[clientID]?.rooms.remove(roomID) }
            }
            if let timer = previous.ttlTimer { clock.cancel(timer) }
        }
        state.rooms[roomID] = room
        roomDirectory.lastRoomCreatedAt = max(roomDirectory.lastRoomCreatedAt, room.createdAt)
        if room.memberCount == 0 {
            if room.emptySince == nil { room.emptySince = now }
            rules.timers.scheduleExpiry(of: room)
        }
    }

    /// A room closed on another node: its connections here stop receiving it, its timers stop.
    private func forget(_ room: LiveRoom) {
        for clientID in room.allConnections {
            state.clients[clientID]?.rooms.remove(room.id)
            state.clients[clientID]?.watching.remove(room.id)
        }
        for member in room.sortedMembers { if let timer = member.dropTimer { clock.cancel(timer) } }
        if let timer = room.ttlTimer { clock.cancel(timer) }
        state.rooms[room.id] = nil
    }

    /// A join or resume here makes this node the holder of the user's membership: a member left present by a node
    /// that died is away until the request attaches it (if the request fails, it drops after the grace period).
    private func claim(_ userID: String, in roomID: String, _ transaction: any ClusterTransaction) throws {
        guard let room = state.rooms[roomID], let claimed = try transaction.claimMembership(roomID: roomID, userID: userID, at: clock.now()),
              let member = room.member(claimed.memberID) else { return }
        room.update(member.id) { $0.disconnectedAt = claimed.disconnectedAt }
        if let since = claimed.disconnectedAt, member.dropTimer == nil {
            rules.timers.scheduleDrop(member.id, in: room, after: remainingGrace(since: since))
        }
    }

    /// After this node was taken over while alive: every member with a connection attached here is held here again
    /// and present, so the survivor's drop finds it is no longer its to drop.
    private func claimBackAttached(_ transaction: any ClusterTransaction, _ batch: inout Batch) throws {
        for roomID in state.rooms.keys.sorted() where !(state.rooms[roomID]?.attached.isEmpty ?? true) {
            try sync(roomID, lock: true, transaction, &batch)
            guard let room = state.rooms[roomID] else { continue }
            for userID in room.attached.keys.sorted() {
                guard let claimed = try transaction.claimMembership(roomID: roomID, userID: userID, at: clock.now()),
                      room.member(claimed.memberID) != nil else { continue }
                try transaction.setDisconnected(memberID: claimed.memberID, since: nil)
                // The takeover removed this node's attachments: recorded again (RoomsService+ClusterAttachments.swift).
                try (transaction as? any ClusterAttachmentTransaction)?.recordAttachment(memberID: claimed.memberID)
                if let timer = room.member(claimed.memberID)?.dropTimer { clock.cancel(timer) }
                room.update(claimed.memberID) {
                    $0.disconnectedAt = nil
                    $0.dropTimer = nil
                }
            }
        }
    }

    /// Takes over the members of nodes whose lease ended (each node once, whichever survivor gets there first):
    /// they are away from now (or since they were), and drop when their grace period ends unless resumed.
    private func takeOver(_ transaction: any ClusterTransaction, _ batch: inout Batch) throws {
        let now = clock.now()
        let taken = try transaction.withSavepoint { try transaction.takeOverExpiredNodes(at: now) }
        guard !taken.isEmpty else { return }
        logger.info("took over the members of nodes whose lease ended", ["members": String(taken.count)])
        for roomID in Set(taken.map(\.roomID)).sorted() { try sync(roomID, lock: true, transaction, &batch) }
        for member in taken {
            guard let room = state.rooms[member.roomID], room.member(member.memberID) != nil else { continue }
            room.update(member.memberID) { $0.disconnectedAt = member.disconnectedAt }
            rules.timers.scheduleDrop(member.memberID, in: room, after: remainingGrace(since: member.disconnectedAt))
            batch.caughtUp(member.roomID)
        }
    }

    /// With several nodes: `forget` runs on the rooms thread for every user whose tokens or claim changed on some
    /// node (the app drops its cached status, so the next request reads the record).
    public func observeClusterUserChanges(_ forget: @escaping @Sendable (String) -> Void) {
        thread.submitAndWait { [self] in state.clusterUserObserver = forget }
    }

    /// After the link (re)connected: every room may have missed notifications, and rooms may have opened meanwhile.
    private func resync(_ transaction: any ClusterTransaction, _ batch: inout Batch) throws {
        var roomIDs = Set(state.rooms.keys)
        var cursor: PageCursor?
        repeat {
            let page = try transaction.openRooms(pageSize: 1000, cursor: cursor)
            roomIDs.formUnion(page.items.map(\.id))
            cursor = page.next
        } while cursor != nil
        for roomID in roomIDs.sorted() { try sync(roomID, lock: false, transaction, &batch) }
    }

    private func remainingGrace(since: Int64) -> TimeSpan {
        .milliseconds(Int(max(0, since + Int64(configuration.gracePeriod.seconds * 1000) - clock.now())))
    }

    /// Whether the member may be dropped now: on one node always; with several, only by the node holding it, while
    /// it is still away in the record (not resumed on another node).
    func clusterAllowsDrop(_ memberID: String, _ step: inout Step) throws -> Bool {
        assertOnRoomsThread()
        guard cluster != nil, let transaction = step.store as? any ClusterTransaction else { return true }
        return try transaction.mayDrop(memberID: memberID, disconnectedAtOrBefore: clock.now())
    }

    /// After each batch (and the reload of rooms a failure touched): committed, every synced or touched room was
    /// delivered through its last event id; not committed, nothing of it went out, so the cursors go back.
    func finishClusterBatch(changedRooms: Set<String>, committed: Bool) {
        assertOnRoomsThread()
        guard cluster != nil else { return }
        defer {
            state.clusterLockedHeads.removeAll()
            state.clusterSynced.removeAll(keepingCapacity: true)
            state.clusterUndo.removeAll(keepingCapacity: true)
        }
        guard committed else {
            for (roomID, previous) in state.clusterUndo { state.clusterDelivered[roomID] = previous }
            return
        }
        for roomID in state.clusterSynced.union(changedRooms) {
            state.clusterDelivered[roomID] = state.rooms[roomID]?.lastEventID
        }
    }

    /// At start with several nodes: registers this node, loads the open rooms as stored (every node's members, with
    /// their stored presence), and asks for a takeover of nodes whose lease has ended — this node's previous run
    /// among them. Members of live nodes are theirs: nothing is marked away here.
    func recoverCluster() throws -> Int {
        assertOnRoomsThread()
        let now = clock.now()
        let lease = Int64(configuration.nodeLease.seconds * 1000)
        let (openRooms, latestCreatedAt) = try store.write { transaction in
            guard let transaction = transaction as? any ClusterTransaction else {
                throw RoomError(.serverInternal, "this store cannot be shared by several nodes")
            }
            try transaction.registerNode(lease: lease)
            try registerMediaAddress(transaction)
            try roomDirectory.limitStoredRooms(transaction)
            let rooms = try transaction.openRoomStates().map { stored in
                (stored, try transaction.stage(roomID: stored.record.id, at: now), try transaction.presence(roomID: stored.record.id))
            }
            return (rooms, try transaction.latestRoomCreatedAt())
        }
        for (stored, stage, presence) in openRooms {
            // Every node's members, with their stored presence.
            let room = LiveRoom(stored: stored, stage: stage, emptySince: LiveRoom.emptySinceAtStart(stored), createdFrom: stored.createdFrom,
                                replacing: nil) { record, _ in LiveMember(record, disconnectedAt: presence[record.memberID]?.disconnectedAt) }
            state.rooms[room.id] = room
            state.clusterDelivered[room.id] = room.lastEventID
            if room.memberCount == 0 { rules.timers.scheduleExpiry(of: room) }
        }
        roomDirectory.lastRoomCreatedAt = latestCreatedAt
        submit(.cluster(.nodesExpired))
        return 0
    }
}

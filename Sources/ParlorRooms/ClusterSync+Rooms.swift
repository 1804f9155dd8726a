import ParlorBasics
import ParlorProtocol

/// Bringing one room here up to date with the record other nodes wrote, and taking over (or back) the members of
/// nodes whose lease ended.
extension ClusterSync {
    /// Through which event id this node's connections were sent the room's events. Within a batch, a room synced
    /// earlier had everything up to the head then queued, and every command since queued its own events; a command
    /// that failed may have left the live id ahead of the record, hence the smaller of the two.
    private func deliveredThrough(_ roomID: String, live: LiveRoom, head: Int64) -> Int64 {
        if synced.contains(roomID) { return min(live.lastEventID, head) }
        return delivered[roomID] ?? live.lastEventID
    }

    /// Records what was queued, keeping the value from before the batch in case the batch does not commit.
    private func setDelivered(_ roomID: String, _ id: Int64?) {
        if undo[roomID] == nil { undo[roomID] = .some(delivered[roomID]) }
        delivered[roomID] = id
    }

    /// Brings one room up to date: delivers the events committed since what this node delivered, to the connections
    /// attached here, and reloads the room when its record moved on (or loads it, or forgets it once closed).
    /// `apply`: the new events may be applied to the live room instead of reading it back (ClusterSync+CatchUp.swift);
    /// false after a lost link or a takeover, where the record may have changed without an event.
    func sync(_ roomID: String, lock: Bool, apply: Bool = false, _ transaction: any ClusterTransaction, _ batch: inout Batch) throws {
        rules.assertOnRoomsThread()
        let live = rules.state.rooms[roomID]
        guard let head = try lockedHeads.removeValue(forKey: roomID) ?? transaction.roomHead(id: roomID, lock: lock) else {
            return
        }
        defer { synced.insert(roomID) }
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
                if applied { appliedCatchUps += 1 }
            }
            if !applied {
                if apply { reloadedCatchUps += 1 }
                try reload(roomID, previous: live, transaction)
                // Without the row lock a commit may land between the statements: the reload may be newer than the head.
                target = max(target, rules.state.rooms[roomID]?.lastEventID ?? target)
            }
        }
        // Joins and leaves go by the room's presence mode (RoomContext+Audience.swift), as on the node that stored them.
        let room = head.closed ? nil : rules.state.rooms[roomID]
        func deliver(_ event: EventRecord) {
            if let room {
                room.deliverCaughtUp(event, to: receivers, &batch.outbox, rules: rules)
            } else {
                let message = ProtocolMessage.event(event)
                for clientID in receivers { batch.outbox.sendEvent(message, to: clientID) }
            }
        }
        if !receivers.isEmpty {
            for event in events where event.id > delivered { deliver(event) }
            var since = max(delivered, events.last?.id ?? read)
            while since < target {
                let page = try transaction.events(roomID: roomID, since: since, pageSize: 500)
                for event in page.items where event.id <= target { deliver(event) }
                guard let last = page.items.last else { break }
                since = last.id
            }
        }
        room?.updatePresenceMode(&batch.outbox, rules: rules)
        setDelivered(roomID, head.closed ? nil : target)
    }

    /// The room as stored, keeping what lives only here: attached connections, watchers, timers, rate windows.
    func reload(_ roomID: String, previous: LiveRoom?, _ transaction: any ClusterTransaction) throws {
        rules.assertOnRoomsThread()
        let now = rules.clock.now()
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
                if let timer = member.dropTimer { rules.clock.cancel(timer) }
                for clientID in previous.connections(of: member.user.id) { rules.state.clients[clientID]?.rooms.remove(roomID) }
            }
            if let timer = previous.ttlTimer { rules.clock.cancel(timer) }
        }
        rules.state.rooms[roomID] = room
        directory.lastRoomCreatedAt = max(directory.lastRoomCreatedAt, room.createdAt)
        if room.memberCount == 0 {
            if room.emptySince == nil { room.emptySince = now }
            rules.timers.scheduleExpiry(of: room)
        }
    }

    /// A room closed on another node: its connections here stop receiving it, its timers stop.
    private func forget(_ room: LiveRoom) {
        for clientID in room.allConnections {
            rules.state.clients[clientID]?.rooms.remove(room.id)
            rules.state.clients[clientID]?.watching.remove(room.id)
        }
        for member in room.sortedMembers { if let timer = member.dropTimer { rules.clock.cancel(timer) } }
        if let timer = room.ttlTimer { rules.clock.cancel(timer) }
        rules.state.rooms[room.id] = nil
    }

    /// A join or resume here makes this node the holder of the user's membership: a member left present by a node
    /// that died is away until the request attaches it (if the request fails, it drops after the grace period).
    func claim(_ userID: String, in roomID: String, _ transaction: any ClusterTransaction) throws {
        guard let room = rules.state.rooms[roomID], let claimed = try transaction.claimMembership(roomID: roomID, userID: userID, at: rules.clock.now()),
              let member = room.member(claimed.memberID) else { return }
        room.update(member.id) { $0.disconnectedAt = claimed.disconnectedAt }
        if let since = claimed.disconnectedAt, member.dropTimer == nil {
            rules.timers.scheduleDrop(member.id, in: room, after: remainingGrace(since: since))
        }
    }

    /// After this node was taken over while alive: every member with a connection attached here is held here again
    /// and present, so the survivor's drop finds it is no longer its to drop.
    func claimBackAttached(_ transaction: any ClusterTransaction, _ batch: inout Batch) throws {
        for roomID in rules.state.rooms.keys.sorted() where !(rules.state.rooms[roomID]?.attached.isEmpty ?? true) {
            try sync(roomID, lock: true, transaction, &batch)
            guard let room = rules.state.rooms[roomID] else { continue }
            for userID in room.attached.keys.sorted() {
                guard let claimed = try transaction.claimMembership(roomID: roomID, userID: userID, at: rules.clock.now()),
                      room.member(claimed.memberID) != nil else { continue }
                try transaction.setDisconnected(memberID: claimed.memberID, since: nil)
                // The takeover removed this node's attachments: recorded again (ClusterAttachmentStore.swift).
                try (transaction as? any ClusterAttachmentTransaction)?.recordAttachment(memberID: claimed.memberID)
                if let timer = room.member(claimed.memberID)?.dropTimer { rules.clock.cancel(timer) }
                room.update(claimed.memberID) {
                    $0.disconnectedAt = nil
                    $0.dropTimer = nil
                }
            }
        }
    }

    /// Takes over the members of nodes whose lease ended (each node once, whichever survivor gets there first):
    /// they are away from now (or since they were), and drop when their grace period ends unless resumed.
    func takeOver(_ transaction: any ClusterTransaction, _ batch: inout Batch) throws {
        let now = rules.clock.now()
        let taken = try transaction.withSavepoint { try transaction.takeOverExpiredNodes(at: now) }
        guard !taken.isEmpty else { return }
        rules.logger.info("took over the members of nodes whose lease ended", ["members": String(taken.count)])
        for roomID in Set(taken.map(\.roomID)).sorted() { try sync(roomID, lock: true, transaction, &batch) }
        for member in taken {
            guard let room = rules.state.rooms[member.roomID], room.member(member.memberID) != nil else { continue }
            room.update(member.memberID) { $0.disconnectedAt = member.disconnectedAt }
            rules.timers.scheduleDrop(member.memberID, in: room, after: remainingGrace(since: member.disconnectedAt))
            batch.caughtUp(member.roomID)
        }
    }

    /// After the link (re)connected: every room may have missed notifications, and rooms may have opened meanwhile.
    func resync(_ transaction: any ClusterTransaction, _ batch: inout Batch) throws {
        var roomIDs = Set(rules.state.rooms.keys)
        var cursor: PageCursor?
        repeat {
            let page = try transaction.openRooms(pageSize: 1000, cursor: cursor)
            roomIDs.formUnion(page.items.map(\.id))
            cursor = page.next
        } while cursor != nil
        for roomID in roomIDs.sorted() { try sync(roomID, lock: false, transaction, &batch) }
    }

    /// What is left of the grace period of a member away since `since`.
    func remainingGrace(since: Int64) -> TimeSpan {
        .milliseconds(Int(max(0, since + Int64(rules.configuration.gracePeriod.seconds * 1000) - rules.clock.now())))
    }
}

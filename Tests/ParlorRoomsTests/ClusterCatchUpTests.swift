import ParlorBasics
import ParlorProtocol
@testable import ParlorRooms
import ParlorRoomsPostgres
import PostgresTestCluster
import Testing

/// Two nodes on one PostgreSQL database: node B catches up what node A commits by applying the events to its live
/// room (ClusterSync+CatchUp.swift). After each round B's applied room must equal the room read back from
/// the database, member for member, and no read-back may have been needed.
@Suite struct ClusterCatchUpTests {
    /// What a node's live room holds that a reload also gives (memory-only parts aside: timers, rate windows,
    /// speaking, the newest hand's time).
    struct Snapshot: Equatable, CustomStringConvertible {
        var members: [String]
        var roles: [String: String]
        var hands: [String: Int64]
        var locked: Bool
        var memberCount: Int
        var lastEventID: Int64
        var emptySince: Int64?
        var lastJoinedAt: Int64
        var bans: [String]
        var attached: [String: Int]
        var watchers: Int
        var encodedMembers: [UInt8]

        init(_ room: LiveRoom) {
            members = room.sortedMembers.map { member in
                "\(member.id) \(member.user.id) \(member.user.name) joined \(member.joinedAt) audio \(member.audioEnabled) "
                    + "muted \(member.audioMuted) away \(member.disconnectedAt.map(String.init) ?? "-") "
                    + "role \(room.role(of: member.user.id).rawValue) hand \(room.hands[member.user.id].map(String.init) ?? "-")"
            }
            // A user without a row is a speaker: an open room's speakers are stored as no row, though the node they
            // joined on keeps them in memory.
            roles = room.roles.filter { room.mode == .stage || $0.value != .speaker }.mapValues(\.rawValue)
            hands = room.hands
            locked = room.locked
            memberCount = room.memberCount
            lastEventID = room.lastEventID
            emptySince = room.emptySince
            lastJoinedAt = room.lastJoinedAt
            bans = room.bans.keys.sorted()
            attached = room.attached.mapValues(\.count)
            watchers = room.watchers.count
            encodedMembers = room.encodedMemberList()
        }

        var description: String {
            "members \(members) roles \(roles) hands \(hands) locked \(locked) count \(memberCount) last \(lastEventID) "
                + "empty \(emptySince.map(String.init) ?? "-") lastJoined \(lastJoinedAt) bans \(bans) attached \(attached)"
        }
    }

    /// How many times the node has read a room back to catch it up from a notification or a command (a resync when
    /// its listening connection comes up, at a time of its own, always reads back and is not counted).
    private func reloads(_ node: RoomsHarness) throws -> Int {
        let service = node.service
        return try #require(service.thread.submitAndWait { service.clusterSync?.reloadedCatchUps })
    }

    /// Brings B up to date with the room (as a notification would, but awaited: notifications also arrive by
    /// themselves, at any time), then returns B's applied room, the room read back from the database on B, and how
    /// many read-backs catching up has needed so far.
    private func compare(_ node: RoomsHarness, _ roomID: String) throws -> (applied: Snapshot, reloaded: Snapshot, reloads: Int) {
        let service = node.service
        let store = try #require(node.store as? PostgresRoomStore)
        service.submit(.cluster(.roomChanged(roomID, through: nil)))
        node.sync()
        let result = service.thread.submitAndWait { () -> Result<[Snapshot], any Error> in
            Result {
                guard let live = service.state.rooms[roomID] else { throw RoomError.notFound(roomID) }
                let applied = Snapshot(live)
                try store.write { transaction in
                    guard let transaction = transaction as? any ClusterTransaction else { throw RoomError.notFound(roomID) }
                    guard let cluster = service.clusterSync else { throw RoomError.notFound(roomID) }
                    try cluster.reload(roomID, previous: live, transaction)
                }
                guard let reloaded = service.state.rooms[roomID] else { throw RoomError.notFound(roomID) }
                return [applied, Snapshot(reloaded)]
            }
        }
        let snapshots = try result.get()
        return (snapshots[0], snapshots[1], try reloads(node))
    }

    /// B's applied room equals the room read back, and catching up read nothing back since B loaded the room
    /// (`loaded`: its read-backs by then).
    private func expectSame(_ node: RoomsHarness, _ roomID: String, _ round: String, loaded: Int) throws {
        let (applied, reloaded, reloads) = try compare(node, roomID)
        #expect(applied == reloaded, "\(round): applied \(applied)\nreloaded \(reloaded)")
        #expect(reloads == loaded, "\(round): catching up read the room back \(reloads - loaded) times")
    }

    @Test func aStageRoomCaughtUpFromEventsEqualsTheRoomReadBack() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let a = try RoomsHarness(clusterDatabase: url), b = try RoomsHarness(clusterDatabase: url)
        defer { a.stop(); b.stop() }
        let moderator = try a.connect("mod")
        let roomID = try a.createRoom(by: moderator, mode: .stage)
        let watcher = try b.connect("watcher")
        try a.joinQuietly([moderator], to: roomID)
        try b.joinQuietly([watcher], to: roomID)  // loads the room on B, if its creation's notification has not
        let loaded = try reloads(b)
        let clients = try (1...4).map { try a.connect("user\($0)") }
        let ids = try a.joinQuietly(clients, to: roomID)
        try expectSame(b, roomID, "joins", loaded: loaded)

        a.request(.stage(cid: roomID, action: .raiseHand), from: clients[0])
        a.request(.stage(cid: roomID, action: .raiseHand), from: clients[1])
        a.request(.stage(cid: roomID, action: .raiseHand), from: clients[2])
        a.request(.stage(cid: roomID, action: .raiseHand), from: clients[3])  // still up at the comparison
        a.request(.stage(cid: roomID, action: .setRole(memberID: ids[0], role: .speaker)), from: moderator)
        a.request(.media(cid: roomID, change: .enable), from: clients[0])
        a.request(.media(cid: roomID, change: .mute(true)), from: clients[0])
        a.request(.stage(cid: roomID, action: .lowerHand(memberID: nil)), from: clients[1])
        a.request(.stage(cid: roomID, action: .message(.text("hello"))), from: clients[1])
        a.request(.leave(cid: roomID), from: clients[2])
        try expectSame(b, roomID, "hands, roles, media, a leave", loaded: loaded)

        a.request(.media(cid: roomID, change: .mute(false)), from: clients[0])
        a.request(.stage(cid: roomID, action: .raiseHand), from: clients[1])  // still up at the comparison
        a.request(.stage(cid: roomID, action: .muteAll), from: moderator)
        a.request(.stage(cid: roomID, action: .lock(true)), from: moderator)
        a.request(.stage(cid: roomID, action: .setRole(memberID: ids[0], role: .listener)), from: moderator)
        // The only moderator leaves: the longest-present speaker is promoted (its own member:role).
        a.request(.stage(cid: roomID, action: .setRole(memberID: ids[3], role: .speaker)), from: moderator)
        a.request(.leave(cid: roomID), from: moderator)
        a.request(.join(cid: roomID), from: clients[2])  // known to the room: the lock lets it back in
        try expectSame(b, roomID, "mute-all, lock, demotion, promotion, a rejoin", loaded: loaded)
        let serviceB = b.service
        #expect(try #require(serviceB.thread.submitAndWait { serviceB.clusterSync?.appliedCatchUps }) > 0)
    }

    @Test func anOpenRoomWithMembersOnBothNodesStaysEqual() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let a = try RoomsHarness(clusterDatabase: url), b = try RoomsHarness(clusterDatabase: url)
        defer { a.stop(); b.stop() }
        let roomID = try a.createRoom()
        let onA = try (1...5).map { try a.connect("a\($0)") }
        let onB = try (1...3).map { try b.connect("b\($0)") }
        try b.joinQuietly([onB[0]], to: roomID)
        let loaded = try reloads(b)
        for round in 0..<3 {
            for client in onA { a.request(.join(cid: roomID), from: client) }
            a.request(.media(cid: roomID, change: .enable), from: onA[round])
            a.request(.media(cid: roomID, change: .mute(true)), from: onA[round])
            b.request(.join(cid: roomID), from: onB[1 + round % 2])
            a.request(.media(cid: roomID, change: .disable), from: onA[round])
            for client in onA.dropFirst(round + 1) { a.request(.leave(cid: roomID), from: client) }
            try expectSame(b, roomID, "round \(round)", loaded: loaded)
            b.request(.leave(cid: roomID), from: onB[1 + round % 2])
        }
        // Everyone on A leaves: B's copy ends with B's member only, as stored.
        for client in onA { a.request(.leave(cid: roomID), from: client) }
        try expectSame(b, roomID, "A's members gone", loaded: loaded)
    }

    @Test func aBanIsReadBack() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let a = try RoomsHarness(clusterDatabase: url), b = try RoomsHarness(clusterDatabase: url)
        defer { a.stop(); b.stop() }
        let moderator = try a.connect("mod")
        let roomID = try a.createRoom(by: moderator, mode: .stage)
        let target = try a.connect("target")
        try a.joinQuietly([moderator, target], to: roomID)
        let watcher = try b.connect("watcher")
        try b.joinQuietly([watcher], to: roomID)
        let loaded = try compare(b, roomID).reloads
        a.request(.stage(cid: roomID, action: .ban(userID: target.user.id, seconds: 60)), from: moderator)
        let (applied, reloaded, reloads) = try compare(b, roomID)
        #expect(reloads == loaded + 1, "a kick may come with a ban, which no event carries")
        #expect(applied == reloaded)
        #expect(applied.bans == [target.user.id])
    }
}

import ParlorBasics
import ParlorPostgres
import ParlorProtocol
@testable import ParlorRooms
import PostgresTestCluster
import Testing

/// Presence by role in big stage rooms (issue 37) without a socket: the mode's thresholds and the audience digest
/// as pure rules, then a stage room past `--full-presence-limit` on both stores (the manual clock fires the
/// audience timer), paging its audience, a resume too far behind, an open room unchanged, and two nodes.
@Suite struct AudiencePresenceTests {
    @Test func theModeSwitchesAboveTheLimitAndBackBelowNinetyPercent() {
        #expect(PresenceMode.next(from: .full, count: 5, limit: 5) == .full)
        #expect(PresenceMode.next(from: .full, count: 6, limit: 5) == .summary)
        #expect(PresenceMode.next(from: .summary, count: 5, limit: 5) == .summary)
        #expect(PresenceMode.next(from: .summary, count: 4, limit: 5) == .full, "4 < 4.5")
        #expect(PresenceMode.next(from: .summary, count: 180, limit: 200) == .summary, "exactly 90 % stays")
        #expect(PresenceMode.next(from: .summary, count: 179, limit: 200) == .full)
        #expect(PresenceMode.next(from: .full, count: 190, limit: 200) == .full, "no switch inside the gap")
    }

    @Test func theDigestCoalescesAndBoundsItsLists() {
        var digest = AudienceDigest()
        #expect(digest.isEmpty)
        digest.addJoin("M1", user: User(id: "U1", name: "one"))
        digest.addJoin("M2", user: User(id: "U2", name: "two"))
        digest.addLeave("M1")  // joined and left inside the interval: in neither list
        digest.addLeave("M0")
        let body = digest.take(count: 7, lastEventID: 42)
        #expect(JSONValue.object(body) == [
            "count": 7, "joined": [["member_id": "M2", "user": ["id": "U2", "name": "two"]]], "left": ["M0"],
            "joined_more": 0, "left_more": 0, "last_event_id": 42,
        ])
        #expect(digest.isEmpty, "taking empties it")

        for index in 0..<20 { digest.addJoin("J\(index)", user: User(id: "U\(index)", name: "u\(index)")) }
        for index in 0..<15 { digest.addLeave("L\(index)") }
        let many = digest.take(count: 100, lastEventID: 80)
        #expect(many["joined"]?.arrayValue?.compactMap { $0["member_id"]?.stringValue } == (0..<12).map { "J\($0)" })
        #expect(many["left"]?.arrayValue?.compactMap(\.stringValue) == (0..<12).map { "L\($0)" })
        #expect(many["joined_more"] == 8)
        #expect(many["left_more"] == 3)

        digest.addJoin("K1", user: User(id: "K", name: "k"))
        digest.addLeave("K2")
        digest.keep { $0 == "K2" }  // after a failed batch: K1 is not joined, K2 still is
        #expect(digest.isEmpty)
    }

    /// A stage room made by alice (moderator) with listeners joined until the room is one short of switching.
    private struct Stage {
        let rooms: RoomsHarness
        let room: String
        let alice: ClientRef
        let listeners: [ClientRef]
        let ids: [String]

        init(_ rooms: RoomsHarness, listeners count: Int) throws {
            self.rooms = rooms
            alice = try rooms.connect("alice")
            room = try rooms.createRoom(by: alice, mode: .stage)
            try rooms.joinQuietly([alice], to: room)
            listeners = try (1...count).map { try rooms.connect("listener\($0)") }
            ids = try rooms.joinQuietly(listeners, to: room)
            _ = rooms.messages(alice)
        }
    }

    private static func configure(_ configuration: inout RoomsConfiguration) {
        configuration.fullPresenceLimit = 5
        configuration.audienceUpdateInterval = .seconds(1)
        configuration.maxResumedPresenceEvents = 3
    }

    @Test(arguments: StoreKind.allCases) func aStageRoomPastTheLimitSummarisesItsAudienceAndSwitchesBack(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store, Self.configure)
        defer { rooms.stop() }
        // Below the limit: exactly today's events, the full list, and `presence: full` in a stage room's reply.
        let stage = try Stage(rooms, listeners: 3)
        let (room, alice, first) = (stage.room, stage.alice, stage.listeners[0])
        let fourth = try rooms.connect("listener4")
        let fourthReply = rooms.request(.join(cid: room), from: fourth)
        #expect(fourthReply.body?["presence"] == "full")
        #expect(fourthReply.body?["members"]?.arrayValue?.count == 5)
        #expect(fourthReply.body?["audience_count"] == nil)
        #expect(rooms.messages(first).map(\.type) == ["member:joined"])

        // The sixth member crosses the limit: its join goes to everyone, then room:presence.
        let fifth = try rooms.connect("listener5")
        rooms.request(.join(cid: room), from: fifth)
        let crossing = rooms.messages(first)
        #expect(crossing.map(\.type) == ["member:joined", "room:presence"])
        let joinedID = try #require(crossing.first?["id"]?.intValue)
        #expect(crossing.last?.body == ["mode": "summary", "count": 6, "last_event_id": JSONValue(Int64(joinedID))])
        #expect(crossing.last?["id"] == nil, "not stored")
        #expect(rooms.messages(alice).map(\.type) == ["member:joined", "member:joined", "room:presence"], "the fourth's and the fifth's")

        // Summary: a listener's join reaches the moderator in full, the audience a second later, coalesced.
        let sixth = try rooms.connect("listener6"), seventh = try rooms.connect("listener7")
        let reply = rooms.request(.join(cid: room), from: sixth)
        #expect(reply.body?["presence"] == "summary")
        #expect(rooms.service.metrics.roomsSummaryPresence.load() == 1)
        #expect(reply.body?["audience_count"] == 6)
        #expect(reply.body?["members"]?.arrayValue?.count == 7, "alice and the six listeners (the first page)")
        #expect(reply.body?["audience_cursor"] == nil)
        rooms.request(.join(cid: room), from: seventh)
        rooms.request(.leave(cid: room), from: seventh)
        #expect(rooms.messages(first).isEmpty, "nothing before the interval ends")
        #expect(rooms.messages(alice).map(\.type) == ["member:joined", "member:joined", "member:left"])
        #expect(rooms.messages(sixth).map(\.type) == ["member:joined"], "its own join")
        rooms.advance(seconds: 1)
        let audience = rooms.messages(first)
        #expect(audience.map(\.type) == ["room:audience"])
        // Every connection but alice's (the moderator's): the five listeners still joined and the sixth.
        #expect(rooms.service.metrics.audienceUpdatesDelivered.load() == 6)
        let sixthID = try #require(reply.body?["member_id"]?.stringValue)
        let stored = try rooms.storedEvents(room)
        #expect(audience.first?.body == [
            "count": 6, "joined": [["member_id": .string(sixthID), "user": sixth.user.json]], "left": [],
            "joined_more": 0, "left_more": 0, "last_event_id": JSONValue(stored.last?.id ?? 0),
        ])
        #expect(rooms.messages(alice).isEmpty, "moderators had every change in full")
        rooms.advance(seconds: 5)
        #expect(rooms.messages(first).isEmpty, "no room:audience without a change")

        // A raised hand matters individually: its leave goes to everyone.
        let second = stage.listeners[1]
        _ = rooms.messages(second)
        rooms.request(.stage(cid: room, action: .raiseHand), from: first)
        _ = rooms.messages(first)
        #expect(rooms.messages(second).map(\.type) == ["member:hand"])
        rooms.request(.leave(cid: room), from: first)
        #expect(rooms.messages(second).map(\.type) == ["member:left"])

        // Every join and leave is stored with gap-free ids.
        let ids = try rooms.storedEvents(room).map(\.id)
        #expect(ids == Array(1...Int64(ids.count)))

        // Down to 4 (< 90 % of 5): the digest goes out first, then room:presence full.
        rooms.request(.leave(cid: room), from: stage.listeners[2])  // 5 left: still summary
        rooms.request(.leave(cid: room), from: fourth)  // 4
        let back = rooms.messages(second)
        #expect(back.map(\.type) == ["room:audience", "room:presence"])
        #expect(back.first?.body?["left"]?.arrayValue?.count == 2)
        #expect(back.last?.body?["mode"] == "full")
        #expect(back.last?.body?["count"] == 4)
        #expect(rooms.service.metrics.roomsSummaryPresence.load() == 0)
        rooms.request(.leave(cid: room), from: fifth)
        #expect(rooms.messages(second).map(\.type) == ["member:left"], "full again: every leave to everyone")
    }

    @Test(arguments: StoreKind.allCases) func theJoinReplyPagesTheAudienceThroughTheMembersListing(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store, Self.configure)
        defer { rooms.stop() }
        let stage = try Stage(rooms, listeners: 104)
        let late = try rooms.connect("late")
        let reply = rooms.request(.join(cid: stage.room), from: late)
        #expect(reply.body?["audience_count"] == 105)
        let listed = try #require(reply.body?["members"]?.arrayValue)
        #expect(listed.count == 26, "alice, the first 24 listeners and the joiner")
        #expect(listed.last?["user"]?["name"] == "late")
        #expect(listed.first?["user"]?["name"] == "alice")
        let cursor = try #require(reply.body?["audience_cursor"]?.stringValue)
        let query = MembersQuery(pageSize: 100, cursor: PageCursor(encoded: cursor), descending: false, state: nil, role: .listener)
        let rest = rooms.request(.members(cid: stage.room, query: query), from: late)
        let names = rest.body?["members"]?.arrayValue?.compactMap { $0["user"]?["name"]?.stringValue }
        #expect(names == (25...104).map { "listener\($0)" } + ["late"])
        #expect(rest.body?["cursor"] == nil)
        let moderators = MembersQuery(pageSize: 10, cursor: nil, descending: false, state: nil, role: .moderator)
        #expect(rooms.request(.members(cid: stage.room, query: moderators), from: late).body?["members"]?.arrayValue?.count == 1)
    }

    @Test(arguments: StoreKind.allCases) func aResumeBehindTooManyPresenceEventsIsLost(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store, Self.configure)
        defer { rooms.stop() }
        let stage = try Stage(rooms, listeners: 6)  // 7 members: summary
        let bob = stage.listeners[0]
        let seen = try #require(try rooms.storedEvents(stage.room).last?.id)
        rooms.disconnect(bob)
        let extra = try (1...2).map { try rooms.connect("extra\($0)") }
        try rooms.joinQuietly(extra, to: stage.room)
        let back = try rooms.connect("listener1")
        let resumed = rooms.request(.resume(sessionID: bob.sessionID, lastEventIDs: [(stage.room, seen)]), from: back)
        #expect(resumed.body?["resumed"]?.arrayValue?.count == 1, "two presence events: replayed")

        let more = try (3...6).map { try rooms.connect("extra\($0)") }
        try rooms.joinQuietly(more, to: stage.room)
        rooms.disconnect(back)
        let again = try rooms.connect("listener1")
        let lost = rooms.request(.resume(sessionID: back.sessionID, lastEventIDs: [(stage.room, seen)]), from: again)
        #expect(lost.body?["lost"] == [.string(stage.room)])
        #expect(lost.body?["lost_reasons"] == [stage.room: "presence-summarised"])
        // The membership stays: a join returns it with a fresh, summary reply.
        let rejoined = rooms.request(.join(cid: stage.room), from: again)
        #expect(rejoined.body?["member_id"] == .string(stage.ids[0]))
        #expect(rejoined.body?["presence"] == "summary")
    }

    @Test(arguments: StoreKind.allCases) func aBigStageRoomComesBackFromARestartInSummary(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store, Self.configure)
        defer { rooms.stop() }
        let stage = try Stage(rooms, listeners: 6)
        try rooms.restart()
        let late = try rooms.connect("late")
        let reply = rooms.request(.join(cid: stage.room), from: late)
        #expect(reply.body?["presence"] == "summary", "no room:presence needed: nobody was told full")
        #expect(reply.body?["audience_count"] == 7)
        #expect(rooms.messages(late).map(\.type) == ["member:joined"], "its own join, no switch")
    }

    @Test func anOpenRoomKeepsTodaysContractAtEverySize() throws {
        let rooms = try RoomsHarness(.sqlite, Self.configure)
        defer { rooms.stop() }
        let alice = try rooms.connect("alice")
        let room = try rooms.createRoom(by: alice)
        try rooms.joinQuietly([alice], to: room)
        let others = try (1...8).map { try rooms.connect("member\($0)") }
        try rooms.joinQuietly(others, to: room)
        #expect(rooms.messages(alice).map(\.type) == Array(repeating: "member:joined", count: 8))
        let late = try rooms.connect("late")
        let reply = try #require(rooms.request(.join(cid: room), from: late).body?.objectValue)
        #expect(reply.pairs.map(\.key) == ["member_id", "cid", "members", "last_event_id", "mode", "locked", "role"])
        #expect(reply["members"]?.arrayValue?.count == 10)
        rooms.advance(seconds: 2)
        #expect(rooms.messages(others[0]).map(\.type) == ["member:joined"])
    }

    @Test func aStageRoomIsCappedByMaxAudienceAndAnOpenRoomByMaxMembersPerRoom() throws {
        let rooms = try RoomsHarness(.sqlite) {
            $0.maxMembersPerRoom = 2
            $0.maxAudience = 3
        }
        defer { rooms.stop() }
        let alice = try rooms.connect("alice")
        let stage = try rooms.createRoom(by: alice, mode: .stage), open = try rooms.createRoom(by: alice)
        let others = try (1...3).map { try rooms.connect("member\($0)") }
        try rooms.joinQuietly([alice] + others.prefix(2), to: stage)
        #expect(rooms.request(.join(cid: stage), from: others[2]).errorCode == "room:error:full")
        try rooms.joinQuietly([alice, others[0]], to: open)
        #expect(rooms.request(.join(cid: open), from: others[1]).errorCode == "room:error:full")
    }

    /// A join that crosses the limit in a batch that fails to commit switched nothing: its room:presence never went
    /// out, so the reloaded room is in full again and the join that commits announces the switch.
    @Test func aSwitchWhoseBatchFailsToCommitIsAnnouncedByTheNextOne() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let rooms = try RoomsHarness(clusterDatabase: url, Self.configure)
        defer { rooms.stop() }
        let stage = try Stage(rooms, listeners: 4)  // 5 members: at the limit
        let admin = try PostgresConnection(url: url)
        defer { admin.close() }
        // A deferred check refuses every member:joined at COMMIT: the whole batch fails after its command ran.
        try admin.execute("""
            CREATE FUNCTION refuse_joins() RETURNS trigger AS $$ BEGIN
              IF NEW.type = 'member:joined' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql;
            CREATE CONSTRAINT TRIGGER refuse_joins AFTER INSERT ON events DEFERRABLE INITIALLY DEFERRED
              FOR EACH ROW EXECUTE FUNCTION refuse_joins()
            """)
        let sixth = try rooms.connect("sixth")
        #expect(rooms.request(.join(cid: stage.room), from: sixth).type == "error")
        #expect(rooms.messages(stage.listeners[0]).isEmpty, "nothing of the failed batch went out")
        try admin.execute("DROP TRIGGER refuse_joins ON events")
        rooms.request(.join(cid: stage.room), from: sixth)
        #expect(rooms.messages(stage.listeners[0]).map(\.type) == ["member:joined", "room:presence"])
    }

    @Test func twoNodesEachDeliverByTheRoomsMode() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let a = try RoomsHarness(clusterDatabase: url, Self.configure), b = try RoomsHarness(clusterDatabase: url, Self.configure)
        defer { a.stop(); b.stop() }
        let alice = try a.connect("alice")
        let room = try a.createRoom(by: alice, mode: .stage)
        try a.joinQuietly([alice], to: room)
        let bob = try b.connect("bob")
        try b.joinQuietly([bob], to: room)
        let onA = try (1...4).map { try a.connect("a\($0)") }
        try a.joinQuietly(onA, to: room)  // 6 members: summary on A
        func catchUp(_ node: RoomsHarness) {
            node.service.submit(.cluster(.roomChanged(room, through: nil)))
            node.sync()
        }
        catchUp(b)
        #expect(b.messages(bob).map(\.type).suffix(2) == ["member:joined", "room:presence"], "B switches as its copy crosses")
        _ = a.messages(alice)

        // A listener joins on A: bob on B hears of it as room:audience, alice (moderator, on A) in full.
        let late = try a.connect("late")
        a.request(.join(cid: room), from: late)
        catchUp(b)
        #expect(b.messages(bob).isEmpty)
        b.advance(seconds: 1)
        let audience = b.messages(bob)
        #expect(audience.map(\.type) == ["room:audience"])
        #expect(audience.first?.body?["joined"]?.arrayValue?.first?["user"]?["name"] == "late")
        #expect(a.messages(alice).map(\.type) == ["member:joined"])

        // A listener joins on B: alice on A gets it in full.
        let carol = try b.connect("carol")
        b.request(.join(cid: room), from: carol)
        catchUp(a)
        #expect(a.messages(alice).map(\.type) == ["member:joined"])
        #expect(a.messages(onA[0]).isEmpty)
    }
}

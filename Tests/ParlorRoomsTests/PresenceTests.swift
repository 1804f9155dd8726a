import ParlorProtocol
@testable import ParlorRooms
import Testing

/// Disconnect, grace period, resume and drop, ttl close, session expiry and restart recovery, on a manual clock.
@Suite struct PresenceTests {
    @Test(arguments: StoreKind.allCases) func aDisconnectedMemberDropsOnceWhenTheGracePeriodEnds(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let alice = try rooms.connect("alice")
        let bob = try rooms.connect("bob")
        rooms.request(.join(cid: roomID), from: alice)
        rooms.request(.join(cid: roomID), from: bob)
        _ = rooms.messages(bob)

        rooms.disconnect(alice)
        #expect(rooms.messages(bob).isEmpty, "nobody sees a disconnect")
        rooms.advance(seconds: 9.9)
        #expect(rooms.messages(bob).isEmpty)
        #expect(try rooms.storedMembers(roomID, state: .joined).count == 2)

        rooms.advance(seconds: 0.1)
        let dropped = rooms.messages(bob)
        #expect(dropped.map(\.type) == ["member:left"])
        #expect(dropped.first?.body?["reason"]?.stringValue == "dropped")
        #expect(dropped.first?.body?["user"]?["name"]?.stringValue == "alice")
        rooms.advance(seconds: 60)
        #expect(rooms.messages(bob).filter { $0.type == "member:left" }.isEmpty, "dropped exactly once")
        #expect(try rooms.storedMembers(roomID, state: .joined).map(\.user.name) == ["bob"])
        #expect(try rooms.storedEvents(roomID).filter { $0.type == "member:left" }.count == 1)
    }

    @Test(arguments: StoreKind.allCases) func aMemberWithAnotherConnectionLeftDoesNotDrop(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let alice = try rooms.connect("alice")
        let aliceElsewhere = try rooms.connect("alice")
        rooms.request(.join(cid: roomID), from: alice)
        rooms.request(.join(cid: roomID), from: aliceElsewhere)
        rooms.disconnect(alice)
        rooms.advance(seconds: 30)
        #expect(try rooms.storedMembers(roomID, state: .joined).map(\.user.name) == ["alice"])
        #expect(rooms.pendingTimers == 1, "only the session sweep is armed")
    }

    @Test(arguments: StoreKind.allCases) func joiningAgainWithinTheGracePeriodKeepsTheMembership(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let alice = try rooms.connect("alice")
        let bob = try rooms.connect("bob")
        let first = rooms.request(.join(cid: roomID), from: alice)
        rooms.request(.join(cid: roomID), from: bob)
        _ = rooms.messages(bob)
        rooms.disconnect(alice)
        rooms.advance(seconds: 5)

        let back = try rooms.connect("alice")
        let again = rooms.request(.join(cid: roomID), from: back)
        #expect(again.body?["member_id"] == first.body?["member_id"])
        rooms.advance(seconds: 30)
        #expect(rooms.messages(bob).isEmpty, "no member:left, no second member:joined")
        #expect(try rooms.storedMembers(roomID, state: .joined).count == 2)
    }

    @Test(arguments: StoreKind.allCases) func resumeWithinTheGracePeriodReattachesAndReplaysWhatWasMissed(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let otherRoom = try rooms.createRoom()
        let alice = try rooms.connect("alice")
        let bob = try rooms.connect("bob")
        let joined = rooms.request(.join(cid: roomID), from: alice)
        let seen = try #require(joined.body?["last_event_id"]?.intValue)
        rooms.disconnect(alice)

        rooms.request(.join(cid: roomID), from: bob)
        rooms.request(.media(cid: roomID, change: .enable), from: bob)
        rooms.advance(seconds: 9)
        let back = try rooms.connect("alice")
        let resumed = rooms.request(.resume(sessionID: alice.sessionID,
                                            lastEventIDs: [(roomID, Int64(seen)), (otherRoom, Int64(0))]), from: back)
        #expect(resumed.type == "session:resume:success")
        #expect(resumed.body?["resumed"]?.arrayValue?.compactMap { $0["cid"]?.stringValue } == [roomID])
        #expect(resumed.body?["resumed"]?.arrayValue?.first?["member_id"] == joined.body?["member_id"])
        #expect(resumed.body?["lost"] == JSONValue.array([.string(otherRoom)]))
        let replay = rooms.messages(back)
        #expect(replay.map(\.type) == ["member:joined", "member:media"])
        #expect(replay.compactMap { $0["id"]?.intValue } == [seen + 1, seen + 2])

        rooms.advance(seconds: 30)
        #expect(rooms.messages(bob).filter { $0.type == "member:left" }.isEmpty, "resumed: no drop")
        rooms.request(.media(cid: roomID, change: .mute(true)), from: bob)
        #expect(rooms.messages(back).map(\.type) == ["audio:mute:on"], "the resumed connection receives the room again")
    }

    @Test(arguments: StoreKind.allCases) func aResumeTooFarBehindListsTheRoomAsLost(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store) { $0.maxReplayEvents = 2 }
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let alice = try rooms.connect("alice")
        let bob = try rooms.connect("bob")
        rooms.request(.join(cid: roomID), from: alice)
        rooms.disconnect(alice)
        rooms.request(.join(cid: roomID), from: bob)
        rooms.request(.media(cid: roomID, change: .enable), from: bob)
        rooms.request(.media(cid: roomID, change: .mute(true)), from: bob)
        let back = try rooms.connect("alice")
        let resumed = rooms.request(.resume(sessionID: alice.sessionID, lastEventIDs: [(roomID, Int64(1))]), from: back)
        #expect(resumed.body?["lost"] == JSONValue.array([.string(roomID)]))
        #expect(rooms.messages(back).isEmpty, "nothing is replayed for a lost room")
    }

    @Test(arguments: StoreKind.allCases) func duringShutdownRequestsAreRefusedAndDisconnectsKeepMemberships(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let alice = try rooms.connect("alice")
        rooms.request(.join(cid: roomID), from: alice)
        rooms.service.beginShutdown()
        #expect(rooms.request(.leave(cid: roomID), from: alice).errorCode == "server:error:shutting-down")
        rooms.disconnect(alice)
        rooms.advance(seconds: 60)
        #expect(try rooms.storedMembers(roomID, state: .joined).count == 1, "kept for the next start to recover")
    }

    @Test(arguments: StoreKind.allCases) func resumeAfterTheDropListsTheRoomAsLost(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let alice = try rooms.connect("alice")
        rooms.request(.join(cid: roomID), from: alice)
        rooms.disconnect(alice)
        rooms.advance(seconds: 10)
        let back = try rooms.connect("alice")
        let resumed = rooms.request(.resume(sessionID: alice.sessionID, lastEventIDs: [(roomID, Int64(1))]), from: back)
        #expect(resumed.body?["resumed"] == JSONValue.array([]))
        #expect(resumed.body?["lost"] == JSONValue.array([.string(roomID)]))
    }

    @Test(arguments: StoreKind.allCases) func anEndedSessionExpiresAfterTheGracePeriod(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let alice = try rooms.connect("alice")
        rooms.disconnect(alice)
        rooms.advance(seconds: 5)
        let back = try rooms.connect("alice")
        #expect(rooms.request(.resume(sessionID: alice.sessionID, lastEventIDs: []), from: back).type == "session:resume:success")
        let later = try rooms.connect("alice")
        rooms.disconnect(back)
        // The sweep runs every grace period (10 s here); a session ended longer ago than that is gone.
        rooms.advance(seconds: 21)
        #expect(rooms.request(.resume(sessionID: back.sessionID, lastEventIDs: []), from: later).errorCode == "session:error:not-found")
        let stranger = try rooms.connect("mallory")
        #expect(rooms.request(.resume(sessionID: later.sessionID, lastEventIDs: []), from: stranger).errorCode
            == "session:error:not-found", "a session resumes only for its own user")
    }

    @Test(arguments: StoreKind.allCases) func anEmptyRoomClosesWhenItsTTLRunsOut(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom(ttl: 60)
        let alice = try rooms.connect("alice")
        rooms.advance(seconds: 30)
        rooms.request(.join(cid: roomID), from: alice)
        rooms.advance(seconds: 120)
        #expect(try rooms.storedRoom(roomID)?.closedAt == nil, "a room with a member stays open")

        rooms.request(.leave(cid: roomID), from: alice)
        rooms.advance(seconds: 59)
        #expect(try rooms.storedRoom(roomID)?.closedAt == nil)
        rooms.advance(seconds: 1)
        #expect(try rooms.storedRoom(roomID)?.closedAt != nil)
        #expect(rooms.request(.join(cid: roomID), from: alice).errorCode == "room:error:closed")
    }

    @Test(arguments: StoreKind.allCases) func aRestartGivesMembershipsLeftJoinedAGracePeriodThenDropsThem(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let alice = try rooms.connect("alice")
        let bob = try rooms.connect("bob")
        let aliceJoin = rooms.request(.join(cid: roomID), from: alice)
        rooms.request(.join(cid: roomID), from: bob)

        try rooms.restart()
        #expect(try rooms.storedMembers(roomID, state: .joined).count == 2, "a shutdown keeps memberships")
        let back = try rooms.connect("alice")
        let resumed = rooms.request(.resume(sessionID: alice.sessionID, lastEventIDs: [(roomID, Int64(2))]), from: back)
        #expect(resumed.body?["resumed"]?.arrayValue?.first?["member_id"] == aliceJoin.body?["member_id"])

        rooms.advance(seconds: 10)
        let dropped = rooms.messages(back)
        #expect(dropped.map(\.type) == ["member:left"])
        #expect(dropped.first?.body?["reason"]?.stringValue == "dropped")
        #expect(dropped.first?.body?["user"]?["name"]?.stringValue == "bob")
        rooms.advance(seconds: 60)
        #expect(rooms.messages(back).isEmpty, "dropped exactly once")
        #expect(try rooms.storedMembers(roomID, state: .joined).map(\.user.name) == ["alice"])
    }

    @Test(arguments: StoreKind.allCases) func aRoomLeftEmptyByAPreviousRunClosesOnItsTTL(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom(ttl: 100)
        try rooms.restart(after: 40)
        rooms.advance(seconds: 59)
        #expect(try rooms.storedRoom(roomID)?.closedAt == nil)
        rooms.advance(seconds: 1)
        #expect(try rooms.storedRoom(roomID)?.closedAt != nil, "the ttl counts from when it became empty, across the restart")
    }
}

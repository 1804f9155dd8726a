import ParlorProtocol
@testable import ParlorRooms
import Testing

/// Join, leave, max_members, room close and not-joined errors, against an in-memory store, without a socket.
@Suite struct MembershipTests {
    @Test(arguments: StoreKind.allCases) func joinAddsAMemberAndTellsEveryoneAttached(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let alice = try rooms.connect("alice")
        let bob = try rooms.connect("bob")

        let aliceJoin = rooms.request(.join(cid: roomID), from: alice)
        #expect(aliceJoin.type == "conversation:join:success")
        let aliceMember = try #require(aliceJoin.body?["member_id"]?.stringValue)
        #expect(aliceJoin.body?["members"]?.arrayValue?.count == 1)
        #expect(aliceJoin.body?["last_event_id"] == JSONValue(1))
        #expect(rooms.messages(alice).map(\.type) == ["member:joined"])

        let bobJoin = rooms.request(.join(cid: roomID), from: bob)
        #expect(bobJoin.body?["members"]?.arrayValue?.compactMap { $0["member_id"]?.stringValue }.first == aliceMember)
        let seenByAlice = rooms.messages(alice)
        #expect(seenByAlice.map(\.type) == ["member:joined"])
        #expect(seenByAlice.first?["id"] == JSONValue(2))
        #expect(seenByAlice.first?.body?["user"]?["name"]?.stringValue == "bob")

        #expect(try rooms.storedMembers(roomID, state: .joined).map(\.user.name) == ["alice", "bob"])
        #expect(try rooms.storedEvents(roomID).map(\.id) == [1, 2])
        #expect(try rooms.storedRoom(roomID)?.lastEventID == 2)
    }

    @Test(arguments: StoreKind.allCases) func joiningAgainIsIdempotent(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let alice = try rooms.connect("alice")
        let bob = try rooms.connect("bob")
        let first = rooms.request(.join(cid: roomID), from: alice)
        rooms.request(.join(cid: roomID), from: bob)
        _ = rooms.messages(alice)
        _ = rooms.messages(bob)

        let again = rooms.request(.join(cid: roomID), from: alice)
        #expect(again.body?["member_id"] == first.body?["member_id"])
        #expect(rooms.messages(alice).isEmpty)
        #expect(rooms.messages(bob).isEmpty, "no second member:joined")
        #expect(try rooms.storedMembers(roomID).count == 2)
    }

    @Test(arguments: StoreKind.allCases) func leaveEndsTheMembershipForEveryConnectionOfTheUser(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let alice = try rooms.connect("alice")
        let aliceElsewhere = try rooms.connect("alice")
        let bob = try rooms.connect("bob")
        try rooms.joinQuietly([alice, aliceElsewhere, bob], to: roomID)

        #expect(rooms.request(.leave(cid: roomID), from: aliceElsewhere).type == "conversation:leave:success")
        for client in [alice, aliceElsewhere, bob] {
            let left = rooms.messages(client)
            #expect(left.map(\.type) == ["member:left"])
            #expect(left.first?.body?["reason"]?.stringValue == "left")
        }
        rooms.request(.media(cid: roomID, change: .enable), from: bob)
        #expect(rooms.messages(alice).isEmpty, "a member that left receives no more events")
        #expect(try rooms.storedMembers(roomID, state: .left).map(\.user.name) == ["alice"])
        #expect(rooms.request(.leave(cid: roomID), from: alice).errorCode == "member:error:not-joined")
    }

    @Test(arguments: StoreKind.allCases) func aFullRoomRefusesAnotherMember(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom(maxMembers: 1)
        let alice = try rooms.connect("alice")
        let bob = try rooms.connect("bob")
        rooms.request(.join(cid: roomID), from: alice)
        let refused = rooms.request(.join(cid: roomID), from: bob)
        #expect(refused.errorCode == "room:error:full")
        #expect(refused.body?["request_type"]?.stringValue == "conversation:join")
        #expect(try rooms.storedMembers(roomID).count == 1)
        // The refusal undid nothing else: alice is still there, and a place freed is taken.
        rooms.request(.leave(cid: roomID), from: alice)
        #expect(rooms.request(.join(cid: roomID), from: bob).type == "conversation:join:success")
        // Ids are allocated in the transaction that commits them: a refused command leaves no gap.
        #expect(try rooms.storedEvents(roomID).map(\.id) == [1, 2, 3])
    }

    @Test(arguments: StoreKind.allCases) func requestsOfANonMemberAreRefused(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let alice = try rooms.connect("alice")
        let bob = try rooms.connect("bob")
        rooms.request(.join(cid: roomID), from: bob)
        let bobMember = try #require(try rooms.storedMembers(roomID).first?.memberID)
        #expect(rooms.request(.leave(cid: roomID), from: alice).errorCode == "member:error:not-joined")
        #expect(rooms.request(.media(cid: roomID, change: .enable), from: alice).errorCode == "member:error:not-joined")
        #expect(rooms.request(.signal(kind: .rtcOffer, cid: roomID, to: bobMember, payload: [:]), from: alice).errorCode
            == "member:error:not-joined")
        #expect(rooms.request(.join(cid: "RM-nope"), from: alice).errorCode == "room:error:not-found")
        #expect(rooms.messages(bob).count == 1, "bob saw only his own member:joined")
    }

    @Test(arguments: StoreKind.allCases) func closingARoomEndsEveryMembershipAndRefusesJoins(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let alice = try rooms.connect("alice")
        let bob = try rooms.connect("bob")
        let roomID = try rooms.createRoom(by: alice)
        try rooms.joinQuietly([alice, bob], to: roomID)

        #expect(throws: RoomError.self) { try rooms.perform(.closeRoom(roomID: roomID, by: .user(bob.user))).get() }
        #expect(try rooms.perform(.closeRoom(roomID: roomID, by: .user(alice.user))).get() == .object([:]))
        // Members end in join order; an ended member's connections stop receiving the room.
        for (client, count) in [(alice, 1), (bob, 2)] {
            let closing = rooms.messages(client)
            #expect(closing.map(\.type) == Array(repeating: "member:left", count: count))
            #expect(closing.allSatisfy { $0.body?["reason"]?.stringValue == "room_closed" })
        }
        #expect(try rooms.storedRoom(roomID)?.closedAt != nil)
        #expect(try rooms.storedMembers(roomID, state: .joined).isEmpty)
        #expect(rooms.request(.join(cid: roomID), from: alice).errorCode == "room:error:closed")
        // History stays readable after the close.
        #expect(rooms.request(.events(cid: roomID, since: 0, pageSize: 10), from: bob).body?["events"]?.arrayValue?.count == 4)
    }

    @Test(arguments: StoreKind.allCases) func theReaderListsOpenRoomsNewestFirstInPages(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let first = try rooms.createRoom()
        let second = try rooms.createRoom()
        let third = try rooms.createRoom()
        _ = try rooms.perform(.closeRoom(roomID: second, by: .admin)).get()
        let page = try rooms.store.read { try $0.openRooms(pageSize: 1, cursor: nil) }
        #expect(page.items.map(\.id) == [third])
        let rest = try rooms.store.read { try $0.openRooms(pageSize: 10, cursor: page.next) }
        #expect(rest.items.map(\.id) == [first])
        #expect(rest.next == nil)
    }

    @Test(arguments: StoreKind.allCases) func membersAndEventsPagesComeFromTheStore(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let alice = try rooms.connect("alice")
        let bob = try rooms.connect("bob")
        rooms.request(.join(cid: roomID), from: alice)
        rooms.request(.join(cid: roomID), from: bob)
        rooms.request(.leave(cid: roomID), from: bob)

        let joined = rooms.request(.members(cid: roomID, query: MembersQuery(pageSize: 100, cursor: nil, descending: false, state: nil)), from: alice)
        #expect(joined.body?["members"]?.arrayValue?.compactMap { $0["user"]?["name"]?.stringValue } == ["alice"])
        let page = rooms.request(.events(cid: roomID, since: 1, pageSize: 1), from: alice)
        #expect(page.body?["events"]?.arrayValue?.compactMap { $0["type"]?.stringValue } == ["member:joined"])
        #expect(page.body?["cursor"]?.stringValue == "2")
    }
}

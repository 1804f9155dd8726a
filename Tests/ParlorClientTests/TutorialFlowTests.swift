import Foundation
import ParlorApp
import Testing
@testable import ParlorClient

/// The tutorial app's flow through ParlorClient: login, create/get a conversation, join, members, events, leave.
@Suite struct TutorialFlowTests {
    @Test func authCreateAndListRooms() async throws {
        let (app, anonymous) = try startServer { $0.rooms.defaultRoomTTL = AppConfiguration().rooms.defaultRoomTTL }  // the server's own default
        defer { app.shutdown() }
        let auth = try await anonymous.auth(name: "alice")
        #expect(auth.name == "alice")
        #expect(!auth.jwt.isEmpty)
        #expect(auth.userID.hasPrefix("USR-"))
        #expect(auth.expiresAt.map { $0 > Date() } == true)

        var server = anonymous
        server.token = auth.jwt
        let room = try await server.createRoom(displayName: "Friday chat", name: "friday-chat",
                                               properties: RoomProperties(ttl: 3600, maxMembers: 10))
        #expect(room.id.hasPrefix("RM-"))
        #expect(room.name == "friday-chat")
        #expect(room.displayName == "Friday chat")
        #expect(room.properties == RoomProperties(ttl: 3600, maxMembers: 10))
        #expect(room.createdBy == auth.userID)
        #expect(room.memberCount == 0)
        #expect(room.lastEventID == 0)
        #expect(room.createdAt != nil)

        let defaults = try await anonymous.createRoom(displayName: "Defaults")
        #expect(defaults.properties.ttl == 300)
        #expect(defaults.properties.maxMembers == nil)
        #expect(defaults.createdBy == nil)

        let listed = try await server.rooms()
        #expect(Set(listed.map(\.id)) == [room.id, defaults.id])
        let fetched = try await server.room(id: room.id)
        #expect(fetched == room)
    }

    @Test func joinSeeOthersJoinPageMembersAndLeave() async throws {
        let (app, server) = try startServer()
        defer { app.shutdown() }
        let room = try await server.createRoom(displayName: "Tutorial")
        let alice = try await server.session("alice")
        #expect(alice.user.name == "alice")
        #expect(await alice.sessionID.hasPrefix("SES-"))
        let aliceEvents = Collector.consuming(alice.events)

        let aliceJoin = try await alice.join(room.id)
        #expect(aliceJoin.roomID == room.id)
        #expect(aliceJoin.members.map(\.user.name) == ["alice"])
        #expect(aliceJoin.members.first?.state == .joined)
        #expect(aliceJoin.members.first?.memberID == aliceJoin.memberID)
        #expect(aliceJoin.lastEventID == 1)
        #expect(await alice.joinedRoomIDs == [room.id])

        let bob = try await server.session("bob")
        let bobJoin = try await bob.join(room.id)
        #expect(bobJoin.members.map(\.user.name) == ["alice", "bob"])

        // Alice's stream: her own member:joined first, then Bob's, with the right user.
        let bobJoined = try await aliceEvents.first("bob's member:joined") { $0.isMember(.memberJoined, bobJoin.memberID) }
        #expect(bobJoined.user == bob.user)
        #expect(bobJoined.roomID == room.id)
        #expect(bobJoined.from == bobJoin.memberID)
        #expect(bobJoined.typeName == "member:joined")
        #expect(bobJoined.timestamp != nil)
        #expect(bobJoined.raw["cid"]?.stringValue == room.id)
        let ownJoin = try await aliceEvents.first("alice's own member:joined") { $0.isMember(.memberJoined, aliceJoin.memberID) }
        #expect(ownJoin.id == aliceJoin.lastEventID)
        #expect(bobJoined.id == aliceJoin.lastEventID + 1)

        // getMembersPage: everyone, then one at a time with a cursor, then newest first.
        let everyone = try await alice.members(in: room.id)
        #expect(everyone.roomID == room.id)
        #expect(everyone.members.map(\.user.name) == ["alice", "bob"])
        #expect(everyone.members.allSatisfy { $0.joinedAt != nil && $0.leftAt == nil && $0.state == .joined })
        let firstPage = try await alice.members(in: room.id, pageSize: 1)
        #expect(firstPage.members.map(\.user.name) == ["alice"])
        let cursor = try #require(firstPage.cursor)
        let secondPage = try await alice.members(in: room.id, pageSize: 1, cursor: cursor)
        #expect(secondPage.members.map(\.user.name) == ["bob"])
        let newestFirst = try await alice.members(in: room.id, order: .descending)
        #expect(newestFirst.members.map(\.user.name) == ["bob", "alice"])

        // Bob leaves: Alice sees member:left with reason "left".
        try await bob.leave(room.id)
        #expect(await bob.joinedRoomIDs.isEmpty)
        let bobLeft = try await aliceEvents.first("bob's member:left") { $0.isMember(.memberLeft, bobJoin.memberID) }
        #expect(bobLeft.reason == "left")
        #expect(bobLeft.user?.name == "bob")
        let leftMembers = try await alice.members(in: room.id, state: .left)
        #expect(leftMembers.members.map(\.user.name) == ["bob"])
        #expect(leftMembers.members.first?.state == .left)
        #expect(leftMembers.members.first?.leftAt != nil)

        // History matches what the stream delivered: ids 1, 2, 3 with no gaps.
        let history = try await alice.events(in: room.id)
        #expect(history.events.map(\.id) == [1, 2, 3])
        #expect(history.events.map(\.type) == [.memberJoined, .memberJoined, .memberLeft])
        let recent = try await alice.events(in: room.id, since: 2)
        #expect(recent.events.map(\.id) == [3])
        let paged = try await alice.events(in: room.id, since: 0, pageSize: 2)
        #expect(paged.events.map(\.id) == [1, 2])
        #expect(paged.nextSince == 2)
        #expect(await aliceEvents.items.map(\.id) == [1, 2, 3])

        try await alice.ping()
        let raw = try await alice.rawRequest("conversation:members", body: ["cid": .string(room.id)])
        #expect(raw["members"]?.arrayValue?.count == 1)
        let unknown = await parlorError { _ = try await alice.rawRequest("no:such-request") }
        #expect(unknown?.code == "request:error:unknown-type")
        #expect(unknown?.requestType == "no:such-request")
        await alice.close()
        await bob.close()
    }

    @Test func closeFailsLaterRequestsAndEndsStreams() async throws {
        let (app, server) = try startServer()
        defer { app.shutdown() }
        let room = try await server.createRoom(displayName: "Closing")
        let alice = try await server.session("alice")
        let events = Collector.consuming(alice.events)
        let states = Collector.consuming(alice.connectionStates)
        _ = try await alice.join(room.id)
        await alice.close()
        try await events.waitUntilFinished()
        try await states.waitUntilFinished()
        #expect(await states.items.first.map { if case .connected = $0 { true } else { false } } == true)
        #expect(await states.items.last == .closed(nil))
        let error = await parlorError { _ = try await alice.members(in: room.id) }
        #expect(error?.code == ParlorError.Code.closed)
    }
}

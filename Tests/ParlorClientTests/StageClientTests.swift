import Foundation
import ParlorApp
import Testing
@testable import ParlorClient

/// ParlorClient's typed API for stage rooms: hands, roles, moderation, chat and reactions, and the HTTP moderation.
@Suite struct StageClientTests {
    @Test func aModeratorRunsAStageRoom() async throws {
        let (app, anonymous) = try startServer()
        defer { app.shutdown() }
        let aliceAuth = try await anonymous.auth(name: "alice")
        var server = anonymous
        server.token = aliceAuth.jwt
        let room = try await server.createRoom(displayName: "Town hall", properties: RoomProperties(mode: .stage))
        #expect(room.mode == .stage)
        let alice = try await server.connect(token: aliceAuth.jwt)
        let bob = try await anonymous.session("bob")
        let aliceEvents = Collector.consuming(alice.events)
        let bobEvents = Collector.consuming(bob.events)
        #expect(try await alice.join(room.id).role == .moderator)
        let bobJoin = try await bob.join(room.id)
        #expect(bobJoin.role == .listener)
        #expect(bobJoin.mode == .stage)

        await #expect(throws: ParlorError.self) { try await bob.rawRequest("audio:enable", body: ["cid": .string(room.id)]) }
        try await bob.raiseHand(room.id)
        let hand = try await aliceEvents.first("bob's hand") { $0.eventType == .memberHand && $0.memberID == bobJoin.memberID }
        #expect(hand.raised == true)
        let hands = try await alice.raisedHands(in: room.id)
        #expect(hands.members.map(\.user.name) == ["bob"])
        #expect(hands.members.first?.handRaised == true)
        #expect(try await alice.allRaisedHands(in: room.id).map(\.user.name) == ["bob"])
        #expect(try await server.raisedHands(roomID: room.id).members.count == 1)

        try await alice.setRole(.speaker, of: bobJoin.memberID, in: room.id)
        let role = try await bobEvents.first("bob's role") { $0.eventType == .memberRole }
        #expect(role.role == .speaker)
        #expect(role.by != nil)
        #expect(try await bob.members(in: room.id).members.first { $0.memberID == bobJoin.memberID }?.role == .speaker)

        let id = try await bob.send(message: "Thanks!", in: room.id)
        let message = try await aliceEvents.first("bob's message") { $0.eventType == .messageText }
        #expect(message.id == id)
        #expect(message.text == "Thanks!")
        try await bob.react("🎉", in: room.id)
        let reaction = try await aliceEvents.first("bob's reaction") { $0.eventType == .reaction }
        #expect(reaction.emoji == "🎉")
        #expect(reaction.id == nil)

        try await alice.lock(room.id)
        #expect(try await bobEvents.first("locked") { $0.eventType == .roomLocked }.locked == true)
        #expect(try await server.room(id: room.id).locked)
        try await server.setLocked(false, roomID: room.id)
        #expect(try await bobEvents.first("unlocked") { $0.eventType == .roomLocked && $0.locked == false }.by == nil)
        #expect(try await alice.muteAll(room.id) == 0)

        do {
            try await bob.lock(room.id)
            Issue.record("a speaker locked the room")
        } catch {
            #expect(error.code == ParlorError.Code.notAllowed)
        }
        let until = try await alice.ban(userID: bobJoin.members.first { $0.memberID == bobJoin.memberID }?.user.id ?? "", from: room.id,
                                        seconds: 60)
        #expect(until != nil)
        #expect(try await bobEvents.first("kicked") { $0.eventType == .memberLeft }.reason == "kicked")
        do {
            _ = try await bob.join(room.id)
            Issue.record("a banned user joined")
        } catch {
            #expect(error.code == ParlorError.Code.banned)
        }
        await alice.close()
        await bob.close()
    }
}

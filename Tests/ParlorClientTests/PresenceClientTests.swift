import Foundation
import ParlorApp
import Testing
@testable import ParlorClient

/// ParlorClient decodes a big stage room's presence (issue 37): room:presence, room:audience, the summary join
/// reply, and lists the audience by role; a summary's `last_event_id` counts as seen for a later resume.
@Suite struct PresenceClientTests {
    @Test func aSessionDecodesSummaryPresence() async throws {
        let (app, anonymous) = try startServer {
            $0.rooms.fullPresenceLimit = 2
            $0.rooms.audienceUpdateInterval = .milliseconds(100)
        }
        defer { app.shutdown() }
        let aliceAuth = try await anonymous.auth(name: "alice")
        var server = anonymous
        server.token = aliceAuth.jwt
        let room = try await server.createRoom(displayName: "Town hall", properties: RoomProperties(mode: .stage))
        let alice = try await server.connect(token: aliceAuth.jwt)
        let bob = try await anonymous.session("bob")
        let bobEvents = Collector.consuming(bob.events)
        let aliceEvents = Collector.consuming(alice.events)
        #expect(try await alice.join(room.id).presence == .full)
        #expect(try await bob.join(room.id).audienceCount == nil)

        let carol = try await anonymous.session("carol")
        _ = try await carol.join(room.id)  // three members: past the limit of two
        let switched = try await bobEvents.first("room:presence") { $0.eventType == .roomPresence }
        #expect(switched.presence?.mode == .summary)
        #expect(switched.presence?.count == 3)
        #expect(switched.id == nil)

        let dave = try await anonymous.session("dave")
        let daveJoin = try await dave.join(room.id)
        #expect(daveJoin.presence == .summary)
        #expect(daveJoin.audienceCount == 3)
        #expect(daveJoin.audienceCursor == nil)
        #expect(daveJoin.members.count == 4)
        let audience = try await bobEvents.first("room:audience") { $0.eventType == .roomAudience }
        #expect(audience.audience?.joined.map(\.memberID) == [daveJoin.memberID])
        #expect(audience.audience?.joined.first?.user.name == "dave")
        #expect(audience.audience?.count == 3)
        #expect(audience.audience?.lastEventID == daveJoin.lastEventID)
        #expect(await bob.joined[room.id]?.lastEventID == daveJoin.lastEventID, "the summary counts as seen")
        _ = try await aliceEvents.first("dave's join, in full") { $0.type == .memberJoined && $0.memberID == daveJoin.memberID }

        let listeners = try await dave.members(in: room.id, role: .listener)
        #expect(listeners.members.map(\.user.name) == ["bob", "carol", "dave"])
        #expect(try await dave.members(in: room.id, role: .moderator).members.map(\.user.name) == ["alice"])
    }
}

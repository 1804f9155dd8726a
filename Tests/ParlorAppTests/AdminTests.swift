import Foundation
import Testing
import ParlorApp

/// Closing rooms, kick, mute and the test-mode controls, guarded by the admin token.
@Suite struct AdminTests {
    static let adminToken = "admin-token-for-tests-0123456789"
    static func admin(_ configuration: inout AppConfiguration) {
        configuration.adminToken = adminToken
        configuration.testMode = true
        configuration.rooms.gracePeriod = .milliseconds(200)
    }
    static var bearer: [String: String] { ["Authorization": "Bearer \(adminToken)"] }

    @Test func adminRoutesAreOffWithoutAToken() throws {
        try withServer { app in
            let room = try createRoom(app)
            #expect(try routed(app, "POST", "/rooms/\(room)/members/MEM-x/kick").status == 404)
            #expect(try routed(app, "POST", "/admin/reset").status == 404)
            // Closing needs the creator's token; an anonymous room has no creator, so nobody but an admin may.
            #expect(try routed(app, "DELETE", "/rooms/\(room)").status == 401)
            let stranger = try token(app, "stranger")
            #expect(try routed(app, "DELETE", "/rooms/\(room)", headers: ["Authorization": "Bearer \(stranger)"]).errorCode == "room:error:forbidden")
        }
    }

    @Test func creatorClosesRoomAndMembersSeeRoomClosed() throws {
        try withServer { app in
            let owner = try token(app, "owner")
            let created = try http(app, "POST", "/rooms", json: #"{"display_name":"Mine"}"#, headers: ["Authorization": "Bearer \(owner)"])
            let room = try #require(created.object["id"] as? String)
            let guest = try TestWebSocket(app, name: "guest")
            let guestMember = try #require(try guest.join(room)["member_id"] as? String)
            #expect(try http(app, "DELETE", "/rooms/\(room)", headers: ["Authorization": "Bearer \(owner)"]).status == 204)
            let left = try guest.event("member:left", in: room, member: guestMember)
            #expect((left["body"] as? [String: Any])?["reason"] as? String == "room_closed")
            #expect(try http(app, "GET", "/rooms").array.contains { $0["id"] as? String == room } == false)
            #expect(errorCode(try guest.request("conversation:join", ["cid": room])) == "room:error:closed")
        }
    }

    @Test func adminKicksMutesAndDeletes() throws {
        try withServer(Self.admin) { app in
            let members = try TwoMembers(app)
            let (room, alice, bob, bobMember) = (members.room, members.alice, members.bob, members.bobMember)

            #expect(try http(app, "POST", "/rooms/\(room)/members/\(bobMember)/mute").status == 403)
            #expect(try http(app, "POST", "/rooms/\(room)/members/\(bobMember)/mute", headers: Self.bearer).status == 204)
            let muted = try alice.event("audio:mute:on", in: room, member: bobMember)
            #expect((((muted["body"] as? [String: Any])?["media"] as? [String: Any])?["audio_settings"] as? [String: Any])?["muted"] as? Bool == true)

            #expect(try http(app, "POST", "/rooms/\(room)/members/\(bobMember)/kick", headers: Self.bearer).status == 204)
            let kicked = try alice.event("member:left", in: room, member: bobMember)
            #expect((kicked["body"] as? [String: Any])?["reason"] as? String == "kicked")
            _ = try bob.event("member:left", in: room, member: bobMember)
            #expect(try http(app, "POST", "/rooms/\(room)/members/\(bobMember)/kick", headers: Self.bearer).errorCode == "member:error:not-found")

            #expect(try http(app, "DELETE", "/rooms/\(room)", headers: Self.bearer).status == 204)
            #expect(try http(app, "GET", "/rooms/\(room)").object["closed_at"] != nil)
        }
    }

    @Test func testModeDropsConnectionsAndResets() throws {
        try withServer(Self.admin) { app in
            let members = try TwoMembers(app)
            let (room, alice, bob, bobMember) = (members.room, members.alice, members.bob, members.bobMember)
            try bob.sync()
            let last = try #require(bob.lastEventIDs[room])

            let dropped = try http(app, "POST", "/rooms/\(room)/members/\(bobMember)/drop", headers: Self.bearer)
            #expect(dropped.object["connections"] as? Int == 1)
            #expect(try bob.closeCode() == nil, "a forced drop closes TCP without a close frame")
            // Bob's client reconnects and resumes within the grace period.
            let back = try TestWebSocket(app, name: "bob")
            let resumed = try back.call("session:resume", ["session_id": bob.sessionID, "last_event_ids": [room: last]])
            #expect((resumed["resumed"] as? [[String: Any]])?.count == 1)

            #expect(try http(app, "POST", "/admin/reset", headers: Self.bearer).status == 204)
            #expect(try http(app, "GET", "/rooms").array.isEmpty)
            // Connected sessions are closed with 4004 so clients know their sessions and rooms are gone.
            #expect(try alice.closeCode() == 4004)
            #expect(try back.closeCode() == 4004)
            // A new session works on the reset server.
            let fresh = try createRoom(app)
            let again = try TestWebSocket(app, name: "alice")
            #expect(memberNames(try again.join(fresh)) == ["alice"])
        }
    }
}

import Foundation
import Testing
import ParlorApp

/// Weakness: anyone could read any room's members and history. `--room-visibility` decides: public (the default in
/// open mode, for LANs) or members-only (the default in code and closed modes).
@Suite struct RoomVisibilityTests {
    @Test func defaultFollowsTheAccessMode() throws {
        #expect(try AppConfiguration.parse(arguments: [], environment: [:]).resolvedRoomVisibility == .public)
        #expect(try AppConfiguration.parse(arguments: ["--access", "code"], environment: [:]).resolvedRoomVisibility == .members)
        #expect(try AppConfiguration.parse(arguments: ["--access", "closed"], environment: [:]).resolvedRoomVisibility == .members)
        #expect(try AppConfiguration.parse(arguments: ["--access", "closed", "--room-visibility", "public"], environment: [:])
            .resolvedRoomVisibility == .public)
        #expect(try AppConfiguration.parse(arguments: [], environment: ["PARLOR_ROOM_VISIBILITY": "members"]).resolvedRoomVisibility == .members)
        #expect(throws: ConfigurationError.self) { try AppConfiguration.parse(arguments: ["--room-visibility", "secret"], environment: [:]) }
    }

    @Test func publicRoomsCanBeReadByAnyone() throws {
        try withServer { app in
            let room = try createRoom(app)
            let alice = try TestWebSocket(app, name: "alice")
            _ = try alice.join(room)
            let stranger = try TestWebSocket(app, name: "stranger")
            #expect(try http(app, "GET", "/rooms/\(room)/members").status == 200)
            #expect(try http(app, "GET", "/rooms/\(room)/events").status == 200)
            #expect(memberNames(try stranger.call("conversation:members", ["cid": room])) == ["alice"])
            #expect(try stranger.request("conversation:events", ["cid": room])["type"] as? String == "conversation:events:success")
        }
    }

    @Test func membersOnlyRoomsNeedAMembership() throws {
        try withServer({ $0.roomVisibility = .members }) { app in
            let room = try createRoom(app)
            let alice = try TestWebSocket(app, name: "alice")
            _ = try alice.join(room)
            _ = try alice.call("conversation:leave", ["cid": room])
            let bob = try TestWebSocket(app, name: "bob")
            _ = try bob.join(room)
            let stranger = try TestWebSocket(app, name: "stranger")

            for path in ["/rooms/\(room)/members", "/rooms/\(room)/events"] {
                #expect(try http(app, "GET", path).status == 401, "no token")
                let refused = try http(app, "GET", path, headers: ["Authorization": "Bearer \(try token(app, "stranger"))"])
                #expect(refused.status == 403)
                #expect(refused.errorCode == "member:error:not-joined")
                #expect(try http(app, "GET", path, headers: ["Authorization": "Bearer \(try token(app, "bob"))"]).status == 200, "a member")
                #expect(try http(app, "GET", path, headers: ["Authorization": "Bearer \(try token(app, "alice"))"]).status == 200, "a former member")
            }
            #expect(try http(app, "GET", "/rooms/nope/members", headers: ["Authorization": "Bearer \(try token(app, "bob"))"]).status == 404)

            for type in ["conversation:members", "conversation:events"] {
                #expect(errorCode(try stranger.request(type, ["cid": room])) == "member:error:not-joined")
                #expect(try bob.request(type, ["cid": room])["type"] as? String == type + ":success")
                #expect(try alice.request(type, ["cid": room])["type"] as? String == type + ":success")
            }
            // Rooms themselves stay listed: joining needs the id.
            #expect(try http(app, "GET", "/rooms").status == 200)
        }
    }
}

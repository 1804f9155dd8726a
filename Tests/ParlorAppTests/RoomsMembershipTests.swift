import Foundation
import Testing
import ParlorApp

/// Join, leave, idempotence, several connections of one user, limits and bad requests, on a live server.
@Suite struct RoomsMembershipTests {
    @Test func joinAndLeaveAreSeenByEveryoneInOrder() throws {
        try withServer { app in
            let room = try createRoom(app)
            let alice = try TestWebSocket(app, name: "alice")
            let bob = try TestWebSocket(app, name: "bob")
            let aliceJoin = try alice.join(room)
            #expect(aliceJoin["last_event_id"] as? Int == 1)
            let bobJoin = try bob.join(room)
            #expect(bobJoin["last_event_id"] as? Int == 2)
            let bobMember = try #require(bobJoin["member_id"] as? String)
            #expect(bobMember.hasPrefix("MEM-"))

            let joined = try alice.event("member:joined", in: room, member: bobMember)
            #expect(joined["id"] as? Int == 2)
            #expect(joined["from"] as? String == bobMember)
            let user = (joined["body"] as? [String: Any])?["user"] as? [String: Any]
            #expect(user?["name"] as? String == "bob")
            #expect(user?["id"] as? String == bob.userID)

            // The member list and the events agree on member id and name.
            let listed = try alice.call("conversation:members", ["cid": room])
            let bobListed = members(listed).first { $0["member_id"] as? String == bobMember }
            #expect((bobListed?["user"] as? [String: Any])?["name"] as? String == "bob")
            #expect(bobListed?["state"] as? String == "JOINED")
            let audio = (bobListed?["media"] as? [String: Any])?["audio_settings"] as? [String: Any]
            #expect(audio?["muted"] as? Bool == false)

            _ = try bob.call("conversation:leave", ["cid": room])
            let left = try alice.event("member:left", in: room, member: bobMember)
            #expect(left["id"] as? Int == 3)
            #expect((left["body"] as? [String: Any])?["reason"] as? String == "left")
            // The leaver's own connection sees its member:left too, then nothing more of the room.
            let ownLeft = try bob.event("member:left", in: room, member: bobMember)
            #expect(ownLeft["id"] as? Int == 3)
            #expect(memberNames(try alice.call("conversation:members", ["cid": room])) == ["alice"])
            #expect(alice.eventIDs[room] == [1, 2, 3])

            let history = try alice.call("conversation:events", ["cid": room])
            let types = (history["events"] as? [[String: Any]] ?? []).map { $0["type"] as? String ?? "" }
            #expect(types == ["member:joined", "member:joined", "member:left"])
        }
    }

    @Test func joinIsIdempotent() throws {
        try withServer { app in
            let room = try createRoom(app)
            let alice = try TestWebSocket(app, name: "alice")
            let bob = try TestWebSocket(app, name: "bob")
            _ = try bob.join(room)
            let first = try alice.join(room)
            let second = try alice.join(room)
            #expect(first["member_id"] as? String == second["member_id"] as? String)
            #expect(second["last_event_id"] as? Int == 2)
            #expect(memberNames(second) == ["alice", "bob"])
            try bob.sync()
            #expect(bob.eventIDs[room] == [1, 2], "a second join must not produce a second member:joined")
        }
    }

    @Test func connectionsOfOneUserShareTheMembership() throws {
        try withServer { app in
            let room = try createRoom(app)
            let phone = try TestWebSocket(app, name: "carol")
            let laptop = try TestWebSocket(app, name: "carol")  // with the claim the phone's /auth returned
            let watcher = try TestWebSocket(app, name: "dave")
            _ = try watcher.join(room)
            let fromPhone = try phone.join(room)
            let fromLaptop = try laptop.join(room)
            #expect(fromPhone["member_id"] as? String == fromLaptop["member_id"] as? String)
            let memberID = try #require(fromPhone["member_id"] as? String)

            // Events reach both connections of the user.
            let eve = try TestWebSocket(app, name: "eve")
            _ = try eve.join(room)
            _ = try phone.event("member:joined", in: room, member: nil)
            let eveID = try #require(eve.lastEventIDs[room])
            #expect(try laptop.next { $0["type"] as? String == "member:joined" && $0["id"] as? Int == eveID }["cid"] as? String == room)

            // A leave from one ends the membership for all of them.
            _ = try laptop.call("conversation:leave", ["cid": room])
            _ = try watcher.event("member:left", in: room, member: memberID)
            _ = try phone.event("member:left", in: room, member: memberID)
            try watcher.sync()
            #expect(memberNames(try watcher.call("conversation:members", ["cid": room])) == ["dave", "eve"])
        }
    }

    @Test func roomLimitsAndErrors() throws {
        try withServer { app in
            let room = try createRoom(app, properties: #"{"max_members":2}"#)
            let clients = try ["a", "b", "c"].map { try TestWebSocket(app, name: $0) }
            _ = try clients[0].join(room)
            _ = try clients[1].join(room)
            #expect(errorCode(try clients[2].request("conversation:join", ["cid": room])) == "room:error:full")
            #expect(errorCode(try clients[2].request("conversation:join", ["cid": "RM-nope"])) == "room:error:not-found")
            #expect(errorCode(try clients[2].request("conversation:leave", ["cid": room])) == "member:error:not-joined")
            #expect(errorCode(try clients[2].request("conversation:members", ["cid": "RM-nope"])) == "room:error:not-found")
            #expect(errorCode(try clients[2].request("conversation:members", ["cid": room, "page_size": 0])) == "request:error:invalid-field")
            #expect(errorCode(try clients[2].request("conversation:events", ["cid": room, "since": "x"])) == "request:error:invalid-field")
            #expect(errorCode(try clients[2].request("conversation:join", [:])) == "request:error:missing-field")
            #expect(errorCode(try clients[2].request("session:resume", ["session_id": "SES-unknown"])) == "session:error:not-found")
            // Someone else's session cannot be resumed.
            #expect(errorCode(try clients[2].request("session:resume", ["session_id": clients[0].sessionID])) == "session:error:not-found")
            // After a leave there is room again.
            _ = try clients[1].call("conversation:leave", ["cid": room])
            _ = try clients[2].join(room)
            // GET /rooms shows the live member count.
            let listed = try http(app, "GET", "/rooms").array.first { $0["id"] as? String == room }
            #expect(listed?["member_count"] as? Int == 2)
        }
    }

    @Test func membersPagesAndRESTMirrors() throws {
        try withServer { app in
            let room = try createRoom(app)
            let clients = try (0..<5).map { try TestWebSocket(app, name: "user\($0)") }
            for client in clients { _ = try client.join(room) }
            _ = try clients[4].call("conversation:leave", ["cid": room])

            var names: [String] = []
            var cursor: String?
            repeat {
                var body: [String: Any] = ["cid": room, "page_size": 2]
                if let cursor { body["cursor"] = cursor }
                let page = try clients[0].call("conversation:members", body)
                names += members(page).compactMap { ($0["user"] as? [String: Any])?["name"] as? String }
                cursor = page["cursor"] as? String
            } while cursor != nil
            #expect(names == ["user0", "user1", "user2", "user3"])

            let left = try clients[0].call("conversation:members", ["cid": room, "state": "LEFT"])
            #expect(memberNames(left) == ["user4"])
            #expect(members(left).first?["state"] as? String == "LEFT")
            #expect(((members(left).first?["timestamp"] as? [String: Any])?["left"] as? String) != nil)

            let rest = try http(app, "GET", "/rooms/\(room)/members")
            #expect(rest.status == 200)
            #expect(memberNames(rest.object) == ["user0", "user1", "user2", "user3"])
            let events = try http(app, "GET", "/rooms/\(room)/events?since=3&page_size=1")
            #expect((events.object["events"] as? [[String: Any]])?.first?["id"] as? Int == 4)
            #expect(events.header("Link")?.contains("since=4") == true)
            #expect(try http(app, "GET", "/rooms/RM-nope/members").errorCode == "room:error:not-found")
        }
    }

    @Test func emptyRoomClosesAfterItsTTL() throws {
        try withServer { app in
            let room = try createRoom(app, properties: #"{"ttl":0}"#)
            // A ttl of 0 closes the room as soon as the rooms thread sees it empty.
            var closed = false
            for _ in 0..<500 where !closed {
                closed = try http(app, "GET", "/rooms/\(room)").object["closed_at"] != nil
                if !closed { usleep(2000) }  // no event announces a close to a non-member: poll, bounded
            }
            #expect(closed)
            #expect(try http(app, "GET", "/rooms").array.contains { $0["id"] as? String == room } == false)
            let client = try TestWebSocket(app, name: "late")
            #expect(errorCode(try client.request("conversation:join", ["cid": room])) == "room:error:closed")
        }
    }
}

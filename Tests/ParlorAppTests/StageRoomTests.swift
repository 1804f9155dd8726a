import Foundation
import Testing
import ParlorApp

/// Stage rooms over real sockets: several clients, the moderator's requests, resume, and the REST moderation routes.
@Suite struct StageRoomTests {
    /// A stage room created by alice (moderator) with bob joined as a listener.
    private struct Stage {
        let room: String
        let alice: TestWebSocket
        let bob: TestWebSocket
        let aliceToken: String
        let bobMember: String

        init(_ app: ParlorApplication) throws {
            aliceToken = try token(app, "alice")
            let created = try http(app, "POST", "/rooms", json: #"{"display_name":"Town hall","properties":{"mode":"stage"}}"#,
                                   token: aliceToken)
            #expect(created.status == 201)
            #expect((created.object["properties"] as? [String: Any])?["mode"] as? String == "stage")
            room = try #require(created.object["id"] as? String)
            alice = try TestWebSocket(port: app.port, token: aliceToken)
            bob = try TestWebSocket(app, name: "bob")
            #expect(try alice.join(room)["role"] as? String == "moderator")
            let joined = try bob.join(room)
            #expect(joined["role"] as? String == "listener")
            #expect(joined["mode"] as? String == "stage")
            bobMember = try #require(joined["member_id"] as? String)
        }
    }

    private func body(_ message: [String: Any]) -> [String: Any] { message["body"] as? [String: Any] ?? [:] }

    @Test func aPromotedListenerSpeaksAndADemotedSpeakerIsRefused() throws {
        try withServer { app in
            let stage = try Stage(app)
            let (room, alice, bob) = (stage.room, stage.alice, stage.bob)
            #expect(errorCode(try bob.request("audio:enable", ["cid": room])) == "member:error:not-allowed")
            _ = try bob.call("member:hand:raise", ["cid": room])
            let hand = try alice.event("member:hand", in: room, member: stage.bobMember)
            #expect(body(hand)["raised"] as? Bool == true)
            _ = try bob.event("member:hand", in: room, member: stage.bobMember)
            let hands = try alice.call("conversation:members", ["cid": room, "hands": true])
            #expect(memberNames(hands) == ["bob"])

            _ = try alice.call("member:role", ["cid": room, "member_id": stage.bobMember, "role": "speaker"])
            #expect(body(try bob.event("member:hand", in: room, member: stage.bobMember))["raised"] as? Bool == false)
            #expect(body(try bob.event("member:role", in: room, member: stage.bobMember))["role"] as? String == "speaker")
            _ = try bob.call("audio:enable", ["cid": room])
            _ = try alice.event("member:media", in: room, member: stage.bobMember)

            _ = try alice.call("member:role", ["cid": room, "member_id": stage.bobMember, "role": "listener"])
            let media = try alice.event("member:media", in: room, member: stage.bobMember)
            #expect(((body(media)["media"] as? [String: Any])?["audio_settings"] as? [String: Any])?["enabled"] as? Bool == false)
            #expect(errorCode(try bob.request("audio:enable", ["cid": room])) == "member:error:not-allowed")
            #expect(errorCode(try bob.request("room:lock", ["cid": room])) == "member:error:not-allowed")

            let listed = try http(app, "GET", "/rooms/\(room)/members", token: stage.aliceToken)
            let bobListed = members(listed.object).first { $0["member_id"] as? String == stage.bobMember }
            #expect(bobListed?["role"] as? String == "listener")
            #expect(bobListed?["hand_raised"] as? Bool == false)
        }
    }

    @Test func aBannedUserCannotRejoinUntilTheBanExpires() throws {
        try withServer { app in
            let stage = try Stage(app)
            let (room, alice, bob) = (stage.room, stage.alice, stage.bob)
            let banned = try alice.call("member:ban", ["cid": room, "user_id": bob.userID, "seconds": 1])
            #expect(banned["until"] is String)
            #expect(body(try bob.event("member:left", in: room, member: stage.bobMember))["reason"] as? String == "kicked")
            #expect(errorCode(try bob.request("conversation:join", ["cid": room])) == "room:error:banned")
            // The ban lasts one second: joins are refused until then, and then accepted.
            let deadline = Date().addingTimeInterval(5)
            var reply = try bob.request("conversation:join", ["cid": room])
            while errorCode(reply) == "room:error:banned", Date() < deadline {
                Thread.sleep(forTimeInterval: 0.1)
                reply = try bob.request("conversation:join", ["cid": room])
            }
            #expect(reply["type"] as? String == "conversation:join:success")
            #expect(body(reply)["role"] as? String == "listener", "the role is kept per user")
        }
    }

    @Test func chatAndHandEventsReplayOnResumeWithTheirIDs() throws {
        try withServer({ $0.rooms.gracePeriod = .seconds(5) }) { app in
            let stage = try Stage(app)
            let (room, alice, bob) = (stage.room, stage.alice, stage.bob)
            try bob.sync()
            let last = try #require(bob.lastEventIDs[room])
            let session = bob.sessionID
            bob.drop()
            let sent = try alice.call("message:send", ["cid": room, "text": "Welcome, everyone"])
            let messageID = try #require(sent["id"] as? Int)
            _ = try alice.call("member:hand:raise", ["cid": room])
            _ = try alice.call("reaction:send", ["cid": room, "emoji": "👏"])
            _ = try alice.event("reaction", in: room)

            let back = try TestWebSocket(app, name: "bob")
            _ = try back.call("session:resume", ["session_id": session, "last_event_ids": [room: last]])
            let text = try back.event("message:text", in: room)
            #expect(text["id"] as? Int == messageID)
            #expect(body(text)["text"] as? String == "Welcome, everyone")
            let hand = try back.event("member:hand", in: room)
            #expect(hand["id"] as? Int == messageID + 1)
            try back.sync()
            #expect(!back.log.contains { $0["type"] as? String == "reaction" }, "reactions are not stored or replayed")
            let history = try http(app, "GET", "/rooms/\(room)/events?since=\(last)", token: stage.aliceToken)
            let types = (history.object["events"] as? [[String: Any]])?.compactMap { $0["type"] as? String }
            #expect(types == ["message:text", "member:hand"])
        }
    }

    @Test func aLockedRoomRefusesNewJoinsButAllowsResume() throws {
        try withServer({ $0.rooms.gracePeriod = .seconds(5) }) { app in
            let stage = try Stage(app)
            let (room, alice, bob) = (stage.room, stage.alice, stage.bob)
            _ = try alice.call("room:lock", ["cid": room])
            #expect(body(try bob.event("room:locked", in: room))["locked"] as? Bool == true)
            #expect(try http(app, "GET", "/rooms/\(room)").object["locked"] as? Bool == true)
            let carol = try TestWebSocket(app, name: "carol")
            #expect(errorCode(try carol.request("conversation:join", ["cid": room])) == "room:error:locked")

            try bob.sync()
            let (session, last) = (bob.sessionID, try #require(bob.lastEventIDs[room]))
            bob.drop()
            let back = try TestWebSocket(app, name: "bob")
            let resumed = try back.call("session:resume", ["session_id": session, "last_event_ids": [room: last]])
            #expect((resumed["resumed"] as? [[String: Any]])?.count == 1)
            _ = try alice.call("room:unlock", ["cid": room])
            _ = try carol.join(room)
        }
    }

    @Test func muteAllMutesTheOtherSenders() throws {
        try withServer { app in
            let room = try createRoom(app)
            let alice = try TestWebSocket(app, name: "alice")
            let bob = try TestWebSocket(app, name: "bob")
            let aliceMember = try #require(try alice.join(room)["member_id"] as? String)
            let bobMember = try #require(try bob.join(room)["member_id"] as? String)
            _ = try bob.call("audio:enable", ["cid": room])
            // A room created without a token has no creator: in open mode nobody moderates until REST makes one.
            #expect(errorCode(try alice.request("room:mute-all", ["cid": room])) == "member:error:not-allowed")
            #expect(try http(app, "POST", "/rooms/\(room)/members/\(aliceMember)/role", json: #"{"role":"moderator"}"#).status == 401)
            _ = try alice.event("member:media", in: room, member: bobMember)
        }
        try withServer(AdminTests.admin) { app in
            let room = try createRoom(app)
            let alice = try TestWebSocket(app, name: "alice")
            let bob = try TestWebSocket(app, name: "bob")
            let aliceMember = try #require(try alice.join(room)["member_id"] as? String)
            let bobMember = try #require(try bob.join(room)["member_id"] as? String)
            _ = try bob.call("audio:enable", ["cid": room])
            #expect(try http(app, "POST", "/rooms/\(room)/members/\(aliceMember)/role", json: #"{"role":"moderator"}"#,
                             headers: AdminTests.bearer).status == 204)
            let muted = try alice.call("room:mute-all", ["cid": room])
            #expect(muted["muted"] as? Int == 1)
            let event = try bob.event("audio:mute:on", in: room, member: bobMember)
            #expect(body(event)["by"] as? String == aliceMember)
            _ = try bob.call("audio:mute:off", ["cid": room])
        }
    }

    @Test func whenTheLastModeratorLeavesTheLongestPresentSpeakerIsPromoted() throws {
        try withServer { app in
            let stage = try Stage(app)
            let (room, alice, bob) = (stage.room, stage.alice, stage.bob)
            let carol = try TestWebSocket(app, name: "carol")
            let carolMember = try #require(try carol.join(room)["member_id"] as? String)
            _ = try alice.call("member:role", ["cid": room, "member_id": stage.bobMember, "role": "speaker"])
            _ = try alice.call("member:role", ["cid": room, "member_id": carolMember, "role": "speaker"])
            _ = try alice.call("conversation:leave", ["cid": room])
            let promoted = try carol.next { $0["type"] as? String == "member:role" && (($0["body"] as? [String: Any])?["role"] as? String) == "moderator" }
            #expect(body(promoted)["member_id"] as? String == stage.bobMember)
            #expect(body(promoted)["by"] is NSNull)
            _ = try bob.call("room:lock", ["cid": room])
        }
    }

    @Test func restModerationIsForTheAdminAndTheCreatorOnly() throws {
        try withServer(AdminTests.admin) { app in
            let stage = try Stage(app)
            let (room, bob) = (stage.room, stage.bob)
            let bobToken = try token(app, "bob")
            #expect(try http(app, "POST", "/rooms/\(room)/lock", token: bobToken).errorCode == "room:error:forbidden")
            #expect(try http(app, "POST", "/rooms/\(room)/lock", token: stage.aliceToken).status == 204)
            #expect(body(try bob.event("room:locked", in: room))["by"] is NSNull)
            #expect(try http(app, "POST", "/rooms/\(room)/unlock", headers: AdminTests.bearer).status == 204)
            _ = try bob.call("member:hand:raise", ["cid": room])
            #expect(try http(app, "POST", "/rooms/\(room)/members/\(stage.bobMember)/hand/lower", token: stage.aliceToken).status == 204)
            #expect(try http(app, "POST", "/rooms/\(room)/members/\(stage.bobMember)/role", json: #"{"role":"speaker"}"#,
                             token: bobToken).status == 403)
            #expect(try http(app, "POST", "/rooms/\(room)/members/\(stage.bobMember)/role", json: #"{"role":"boss"}"#,
                             token: stage.aliceToken).errorCode == "request:error:invalid-field")
            #expect(try http(app, "POST", "/rooms/\(room)/mute-all", token: stage.aliceToken).object["muted"] as? Int == 0)
            let ban = try http(app, "POST", "/rooms/\(room)/bans", json: #"{"user_id":"\#(bob.userID)","seconds":60}"#,
                               headers: AdminTests.bearer)
            #expect(ban.status == 200)
            #expect(body(try bob.event("member:left", in: room, member: stage.bobMember))["reason"] as? String == "kicked")
            #expect(errorCode(try bob.request("conversation:join", ["cid": room])) == "room:error:banned")
        }
    }

    @Test func chatTextAndReactionsAreChecked() throws {
        try withServer { app in
            let stage = try Stage(app)
            let (room, bob) = (stage.room, stage.bob)
            #expect(errorCode(try bob.request("message:send", ["cid": room, "text": "hi \u{202E}there"])) == "message:error:invalid-text")
            #expect(errorCode(try bob.request("message:send", ["cid": room, "text": "  "])) == "message:error:invalid-text")
            #expect(errorCode(try bob.request("reaction:send", ["cid": room, "emoji": "ab"])) == "reaction:error:invalid-emoji")
            for index in 1...5 { _ = try bob.call("message:send", ["cid": room, "text": "message \(index)"]) }
            #expect(errorCode(try bob.request("message:send", ["cid": room, "text": "one too many"])) == "message:error:rate-limited")
        }
    }

    @Test func webhooksCarryTheStoredStageEvents() throws {
        let receiver = try WebhookReceiver(failFirst: 0)
        defer { receiver.stop() }
        try withServer({
            $0.webhookURLs = ["http://127.0.0.1:\(receiver.port)/hooks"]
            $0.webhookSecret = "webhook-secret-for-tests"
        }) { app in
            let stage = try Stage(app)
            let (room, alice, bob) = (stage.room, stage.alice, stage.bob)
            _ = try bob.call("member:hand:raise", ["cid": room])
            _ = try alice.call("member:role", ["cid": room, "member_id": stage.bobMember, "role": "speaker"])
            _ = try alice.call("room:lock", ["cid": room])
            _ = try bob.call("message:send", ["cid": room, "text": "hello"])
            _ = try bob.call("reaction:send", ["cid": room, "emoji": "👍"])
            // room_started, two member_joined, then the stage events (a reaction is not stored and sends none).
            let received = try receiver.waitFor(count: 8)
            #expect(received.map(\.event).suffix(5) == ["member_hand", "member_hand", "member_role", "room_locked", "message_text"])
            let message = try #require(try JSONSerialization.jsonObject(with: Data(received[7].body)) as? [String: Any])
            #expect((message["body"] as? [String: Any])?["text"] as? String == "hello")
            #expect(message["room_event_id"] as? Int != nil)
        }
    }
}

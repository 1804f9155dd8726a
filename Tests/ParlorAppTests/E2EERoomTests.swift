#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorApp
import Testing

/// End-to-end encrypted rooms, the server's side (issue 40; docs/e2ee.md): the room property, the client's statement
/// on join and offer, e2ee:key relayed unread and unstored, ciphertext chat, and recording refused. Real server on
/// 127.0.0.1, real WebSockets.
@Suite struct E2EERoomTests {
    static let encrypted = #"{"e2ee":true}"#

    /// Joins `room` stating encryption; returns the join reply's body.
    static func joinEncrypted(_ client: TestWebSocket, _ room: String) throws -> [String: Any] {
        try client.call("conversation:join", ["cid": room, "e2ee": true])
    }

    static func properties(_ room: [String: Any]) -> [String: Any] { room["properties"] as? [String: Any] ?? [:] }

    @Test func theRoomPropertyIsSetAtCreationAndShownEverywhere() throws {
        try withServer { app in
            let room = try createRoom(app, "Private", properties: Self.encrypted)
            let plain = try createRoom(app, "Plain")
            let fetched = try http(app, "GET", "/rooms/\(room)")
            #expect(Self.properties(fetched.object)["e2ee"] as? Bool == true)
            #expect(Self.properties(try http(app, "GET", "/rooms/\(plain)").object)["e2ee"] as? Bool == false)
            let listing = try JSONSerialization.jsonObject(with: Data(try http(app, "GET", "/rooms").body)) as? [[String: Any]] ?? []
            let listed = Dictionary(uniqueKeysWithValues: listing.compactMap { entry in
                (entry["id"] as? String).map { ($0, Self.properties(entry)["e2ee"] as? Bool) }
            })
            #expect(listed[room] == true)
            #expect(listed[plain] == false)

            let alice = try TestWebSocket(app, name: "alice")
            #expect(try Self.joinEncrypted(alice, room)["e2ee"] as? Bool == true)
            #expect(try alice.join(plain)["e2ee"] == nil, "a normal room's join reply stays as it was")

            let refused = try http(app, "POST", "/rooms", json: #"{"display_name":"x","properties":{"e2ee":"yes"}}"#)
            #expect(refused.status == 400)
            #expect(refused.text.contains("properties.e2ee"), "\(refused.text)")
        }
    }

    @Test func anEncryptedRoomNeedsTheClientsStatementOnJoinAndOffer() throws {
        try withServer { app in
            let room = try createRoom(app, "Private", properties: Self.encrypted)
            let alice = try TestWebSocket(app, name: "alice")
            #expect(errorCode(try alice.request("conversation:join", ["cid": room])) == "room:error:encryption-required")
            #expect(errorCode(try alice.request("conversation:join", ["cid": room, "e2ee": false])) == "room:error:encryption-required")
            #expect(errorCode(try alice.request("conversation:join", ["cid": room, "e2ee": "yes"])) == "request:error:invalid-field")
            _ = try Self.joinEncrypted(alice, room)
            // The statement is checked before the SDP is looked at.
            #expect(errorCode(try alice.request("media:offer", ["cid": room, "sdp": "v=0"])) == "room:error:encryption-required")
            #expect(errorCode(try alice.request("media:offer", ["cid": room, "sdp": "v=0", "e2ee": true])) != "room:error:encryption-required")
            // A normal room does not ask.
            let plain = try createRoom(app, "Plain")
            _ = try alice.join(plain)
        }
    }

    /// An announcement (no wrapped keys) reaches every other joined member; wrapped keys reach only the members they
    /// name: a member's reply to a newcomer costs one message, not one per member.
    @Test func aKeyMessageReachesTheMembersItIsForAndIsNotKept() throws {
        try withServer { app in
            let room = try createRoom(app, "Private", properties: Self.encrypted)
            let (alice, bob, carol) = (try TestWebSocket(app, name: "alice"), try TestWebSocket(app, name: "bob"), try TestWebSocket(app, name: "carol"))
            let aliceMember = try #require(try Self.joinEncrypted(alice, room)["member_id"] as? String)
            let bobMember = try #require(try Self.joinEncrypted(bob, room)["member_id"] as? String)
            _ = try Self.joinEncrypted(carol, room)
            let watcher = try TestWebSocket(app, name: "watcher")
            _ = try watcher.call("conversation:watch", ["cid": room])

            #expect(try alice.call("e2ee:key", ["cid": room, "v": 1, "public_key": "BFqM", "keys": [Any]()]).isEmpty)
            for client in [bob, carol] {
                let relayed = try client.event("e2ee:key", in: room)
                #expect(relayed["from"] as? String == aliceMember)
                #expect(relayed["id"] == nil, "never stored: no event id")
                let received = try #require(relayed["body"] as? [String: Any])
                #expect(received["cid"] as? String == room)
                #expect(received["v"] as? Int == 1)
                #expect(received["public_key"] as? String == "BFqM")
            }
            // Addressed to bob (and to an id that is nobody's): bob alone gets it, as sent.
            let addressed: [String: Any] = ["cid": room, "v": 1, "public_key": "BFqM",
                                            "keys": [["to": bobMember, "key_id": 1, "wrapped": "i02o"], ["to": "MEM-x", "key_id": 1, "wrapped": "zzzz"]]]
            _ = try alice.call("e2ee:key", addressed)
            let relayed = try bob.event("e2ee:key", in: room)
            #expect(((relayed["body"] as? [String: Any])?["keys"] as? [[String: Any]])?.map { $0["wrapped"] as? String } == ["i02o", "zzzz"])
            // Nobody but bob is named: the next announcement is the next key message carol sees.
            _ = try alice.call("e2ee:key", ["cid": room, "v": 1, "public_key": "BFqN", "keys": [Any]()])
            let next = try carol.event("e2ee:key", in: room)
            #expect((next["body"] as? [String: Any])?["public_key"] as? String == "BFqN", "carol got the message addressed to bob")
            for client in [alice, watcher] {
                try client.sync()
                #expect(!client.log.contains { $0["type"] as? String == "e2ee:key" }, "neither the sender nor a watcher gets it")
            }
            let history = try bob.call("conversation:events", ["cid": room])
            let types = (history["events"] as? [[String: Any]] ?? []).compactMap { $0["type"] as? String }
            #expect(!types.isEmpty && !types.contains("e2ee:key"), "\(types)")
        }
    }

    @Test func keyMessagesAreRefusedFromNonMembersOverTheBoundAndInNormalRooms() throws {
        try withServer { app in
            let room = try createRoom(app, "Private", properties: Self.encrypted)
            let alice = try TestWebSocket(app, name: "alice")
            #expect(errorCode(try alice.request("e2ee:key", ["cid": room])) == "member:error:not-joined")
            _ = try Self.joinEncrypted(alice, room)
            let bob = try TestWebSocket(app, name: "bob")
            _ = try Self.joinEncrypted(bob, room)
            // 16 KiB of JSON is relayed; a byte more is not.
            let overhead = #"{"cid":"\#(room)","pad":""}"#.utf8.count
            let fits = String(repeating: "a", count: 16 * 1024 - overhead)
            _ = try alice.call("e2ee:key", ["cid": room, "pad": fits])
            #expect((try bob.event("e2ee:key", in: room)["body"] as? [String: Any])?["pad"] as? String == fits)
            #expect(errorCode(try alice.request("e2ee:key", ["cid": room, "pad": fits + "a"])) == "e2ee:error:too-large")
            #expect(errorCode(try alice.request("e2ee:key", ["cid": "RM-nope"])) == "room:error:not-found")
            let plain = try createRoom(app, "Plain")
            _ = try alice.join(plain)
            #expect(errorCode(try alice.request("e2ee:key", ["cid": plain])) == "request:error:invalid-field")
        }
    }

    @Test func keyMessagesAreRateLimitedLikeEveryOtherMessage() throws {
        try withServer({ $0.messagesPerSecond = 5 }) { app in
            let room = try createRoom(app, "Private", properties: Self.encrypted)
            let alice = try TestWebSocket(app, name: "alice")
            _ = try Self.joinEncrypted(alice, room)
            // Burst 2x the rate: the connection closes with 1008 once it is spent.
            for _ in 0..<20 { try alice.sendText(#"{"type":"e2ee:key","body":{"cid":"\#(room)"}}"#) }
            var closed: UInt16?
            while closed == nil {
                if case .close(let code, _) = try alice.nextMessage() { closed = code ?? 0 }
            }
            #expect(closed == 1008)
        }
    }

    @Test func chatInAnEncryptedRoomIsCiphertextStoredAndReplayed() throws {
        try withServer { app in
            let room = try createRoom(app, "Private", properties: Self.encrypted)
            let (alice, bob) = (try TestWebSocket(app, name: "alice"), try TestWebSocket(app, name: "bob"))
            for client in [alice, bob] { _ = try Self.joinEncrypted(client, room) }
            let ciphertext = "AQFzZWNyZXQgYnl0ZXMgb25seSBtZW1iZXJzIHJlYWQ="
            let id = try #require(try alice.call("message:send", ["cid": room, "ciphertext": ciphertext])["id"] as? Int)
            let live = try bob.event("message:text", in: room)
            #expect(live["id"] as? Int == id)
            #expect((live["body"] as? [String: Any])?["ciphertext"] as? String == ciphertext)
            #expect((live["body"] as? [String: Any])?["text"] == nil)
            let history = try http(app, "GET", "/rooms/\(room)/events", token: try token(app, "bob"))
            let stored = (try JSONSerialization.jsonObject(with: Data(history.body)) as? [String: Any])?["events"] as? [[String: Any]] ?? []
            let message = try #require(stored.first { $0["type"] as? String == "message:text" })
            #expect((message["body"] as? [String: Any])?["ciphertext"] as? String == ciphertext)

            #expect(errorCode(try alice.request("message:send", ["cid": room, "text": "hello"])) == "room:error:encryption-required")
            for bad in ["not base64!", "AQF", "", "AQ==AQ==", String(repeating: "A", count: 8 * 1024 + 4)] {
                #expect(errorCode(try alice.request("message:send", ["cid": room, "ciphertext": bad])) == "message:error:invalid-ciphertext", "\(bad.prefix(20))")
            }
            #expect(errorCode(try alice.request("message:send", ["cid": room, "ciphertext": ciphertext, "text": "x"])) == "request:error:invalid-field")
            // 8 KiB of base64 is the bound, inclusive.
            _ = try alice.call("message:send", ["cid": room, "ciphertext": String(repeating: "A", count: 8 * 1024)])

            let plain = try createRoom(app, "Plain")
            _ = try alice.join(plain)
            #expect(errorCode(try alice.request("message:send", ["cid": plain, "ciphertext": ciphertext])) == "message:error:invalid-ciphertext")
            _ = try alice.call("message:send", ["cid": plain, "text": "hello"])
        }
    }

    /// The server cannot record or stream what it cannot hear (issue 38 item 5): recording over WebSocket and REST, an
    /// admin's included, and the live stream, public or not, are refused with room:error:encrypted.
    @Test func recordingAndTheLiveStreamRefuseAnEncryptedRoom() throws {
        try withRecordingServer(.sqlite) { app in
            let aliceToken = try token(app, "alice")
            let created = try http(app, "POST", "/rooms", json: #"{"display_name":"Private","properties":{"e2ee":true}}"#, token: aliceToken)
            let room = try #require(created.object["id"] as? String)
            let alice = try TestWebSocket(port: app.port, token: aliceToken)
            _ = try Self.joinEncrypted(alice, room)
            #expect(errorCode(try alice.request("room:record:start", ["cid": room])) == "room:error:encrypted")
            #expect(errorCode(try alice.request("room:stream:public", ["cid": room, "public": true])) == "room:error:encrypted")
            for (method, path, token) in [("POST", "/rooms/\(room)/recordings", aliceToken), ("POST", "/rooms/\(room)/recordings", recordingAdminToken),
                                          ("GET", "/rooms/\(room)/live.ogg", aliceToken)] {
                let refused = try http(app, method, path, token: token)
                #expect(refused.status == 409 && refused.object["code"] as? String == "room:error:encrypted", "\(method) \(path): \(refused.text)")
            }
        }
    }
}

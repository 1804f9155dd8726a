import Foundation
import Testing
import ParlorApp

/// WebRTC signalling relay and media state (mute, speaking, audio senders) over the live protocol.
@Suite struct MediaSignallingTests {
    @Test func signallingIsRelayedOnlyToItsTargetAndNotStored() throws {
        try withServer { app in
            let room = try createRoom(app)
            let alice = try TestWebSocket(app, name: "alice")
            let bob = try TestWebSocket(app, name: "bob")
            let carol = try TestWebSocket(app, name: "carol")
            let aliceMember = try #require(try alice.join(room)["member_id"] as? String)
            let bobMember = try #require(try bob.join(room)["member_id"] as? String)
            _ = try carol.join(room)

            _ = try alice.call("rtc:offer", ["cid": room, "to": bobMember, "sdp": "v=0 offer"])
            let offer = try bob.next { $0["type"] as? String == "rtc:offer" }
            #expect(offer["from"] as? String == aliceMember)
            let body = offer["body"] as? [String: Any]
            #expect(body?["sdp"] as? String == "v=0 offer")
            #expect(body?["to"] as? String == bobMember)
            _ = try bob.call("rtc:ice", ["cid": room, "to": aliceMember, "candidate": ["candidate": "candidate:1 1 udp 1 127.0.0.1 9 typ host", "sdpMid": "0"]])
            let ice = try alice.next { $0["type"] as? String == "rtc:ice" }
            #expect(((ice["body"] as? [String: Any])?["candidate"] as? [String: Any])?["sdpMid"] as? String == "0")
            try carol.sync()
            #expect(carol.inbox.contains { ($0["type"] as? String)?.hasPrefix("rtc:") == true } == false)

            let history = try alice.call("conversation:events", ["cid": room])
            #expect((history["events"] as? [[String: Any]] ?? []).allSatisfy { ($0["type"] as? String)?.hasPrefix("rtc:") == false })

            let outsider = try TestWebSocket(app, name: "dave")
            #expect(errorCode(try outsider.request("rtc:offer", ["cid": room, "to": bobMember, "sdp": "x"])) == "member:error:not-joined")
            #expect(errorCode(try alice.request("rtc:offer", ["cid": room, "to": "MEM-nobody", "sdp": "x"])) == "member:error:unknown-target")
            #expect(errorCode(try alice.request("rtc:offer", ["cid": room, "to": aliceMember, "sdp": "x"])) == "member:error:unknown-target")
            #expect(errorCode(try alice.request("rtc:answer", ["cid": room, "to": bobMember])) == "request:error:missing-field")
            let huge = String(repeating: "a", count: 17 * 1024)
            #expect(errorCode(try alice.request("rtc:offer", ["cid": room, "to": bobMember, "sdp": huge])) == "request:error:invalid-field")
            #expect(errorCode(try alice.request("rtc:ice", ["cid": room, "to": bobMember, "candidate": 5])) == "request:error:invalid-field")
        }
    }

    /// In mesh mode clients report their own speaking; with --media sfu the server does (SFUTests).
    @Test func muteAndAudioAreStoredSpeakingIsOnlyBroadcast() throws {
        try withServer({ $0.rooms.mediaMode = .mesh }) { app in
            let room = try createRoom(app)
            let alice = try TestWebSocket(app, name: "alice")
            let bob = try TestWebSocket(app, name: "bob")
            let aliceMember = try #require(try alice.join(room)["member_id"] as? String)
            _ = try bob.join(room)

            _ = try alice.call("audio:enable", ["cid": room])
            let media = try bob.event("member:media", in: room, member: aliceMember)
            #expect(media["id"] as? Int == 3)
            _ = try alice.call("audio:mute:on", ["cid": room])
            let muted = try bob.event("audio:mute:on", in: room, member: aliceMember)
            #expect(muted["id"] as? Int == 4)
            let settings = ((muted["body"] as? [String: Any])?["media"] as? [String: Any])?["audio_settings"] as? [String: Any]
            #expect(settings?["muted"] as? Bool == true)
            #expect(settings?["enabled"] as? Bool == true)
            // Muting twice changes nothing and sends nothing.
            _ = try alice.call("audio:mute:on", ["cid": room])

            _ = try alice.call("audio:speaking:on", ["cid": room])
            let speaking = try bob.event("audio:speaking:on", in: room, member: aliceMember)
            #expect(speaking["id"] == nil, "speaking events take no sequence id")

            let listed = members(try bob.call("conversation:members", ["cid": room])).first { $0["member_id"] as? String == aliceMember }
            let listedAudio = (listed?["media"] as? [String: Any])?["audio_settings"] as? [String: Any]
            #expect(listedAudio?["muted"] as? Bool == true)
            #expect(listedAudio?["enabled"] as? Bool == true)

            let history = try bob.call("conversation:events", ["cid": room])
            let types = (history["events"] as? [[String: Any]] ?? []).map { $0["type"] as? String ?? "" }
            #expect(types == ["member:joined", "member:joined", "member:media", "audio:mute:on"])
            try bob.sync()
            #expect(bob.eventIDs[room] == [2, 3, 4])

            // A late joiner sees the current media state in its join reply.
            let carol = try TestWebSocket(app, name: "carol")
            let joined = members(try carol.join(room)).first { $0["member_id"] as? String == aliceMember }
            #expect(((joined?["media"] as? [String: Any])?["audio_settings"] as? [String: Any])?["muted"] as? Bool == true)
        }
    }

    @Test func audioSendersAreCappedAndICEServersAreHandedOut() throws {
        try withServer({
            $0.rooms.maxAudioSenders = 1
            $0.iceURLs = ["stun:stun.example.test:3478", "turn:turn.example.test:3478"]
            $0.iceUsername = "parlor"
            $0.iceCredential = "secret"
        }) { app in
            let members = try TwoMembers(app)
            let (room, alice, bob) = (members.room, members.alice, members.bob)
            _ = try alice.call("audio:enable", ["cid": room])
            #expect(errorCode(try bob.request("audio:enable", ["cid": room])) == "media:error:too-many-senders")
            _ = try alice.call("audio:disable", ["cid": room])
            _ = try bob.call("audio:enable", ["cid": room])

            let hello = try TestWebSocket(port: app.port, token: try token(app, "carol"), awaitSession: false)
            let session = try hello.next { $0["type"] as? String == "session:success" }
            let body = session["body"] as? [String: Any]
            #expect(body?["max_audio_senders"] as? Int == 1)
            let servers = body?["ice_servers"] as? [[String: Any]] ?? []
            #expect(servers.count == 2)
            #expect(servers.last?["username"] as? String == "parlor")
            #expect((servers.first?["urls"] as? [String]) == ["stun:stun.example.test:3478"])
        }
    }
}

import Foundation
import ParlorApp
import ParlorLoop
import ParlorMedia
import Testing

/// The forwarding unit end to end (--media sfu): a real server on 127.0.0.1, members signalling over the WebSocket,
/// and in-process media clients (`MediaTestClient`: STUN, DTLS client, SRTP over real UDP) in the browser's place.
///
/// Absence is shown by order, not by waiting: the server handles one source's datagrams in the order they came and
/// sends each packet's copies in one batch, so once a later packet ("marker") arrived, an earlier one that was
/// forwarded would have arrived before it.
@Suite(.serialized) struct SFUTests {
    @Test func oneSpeakerReachesEveryListenerAndNeverItself() throws {
        try withServer { app in
            let harness = try Harness(app)
            let room = try createRoom(app)
            let alice = try harness.join(room, "alice", speaker: true)
            let bob = try harness.join(room, "bob", speaker: false)
            let carol = try harness.join(room, "carol", speaker: false)

            // The answer: alice may send on mid 0; the slots are sendonly with their own SSRC and stream id.
            let sdp = try #require(bob.answer["sdp"] as? String)
            #expect(sdp.contains("a=ice-lite") && sdp.contains("a=msid:slot-1 ") && sdp.contains("a=setup:passive"))
            let replySlots = bob.answer["slots"] as? [[String: Any]] ?? []
            #expect(replySlots.map { $0["mid"] as? String } == ["1", "2", "3"])
            #expect(replySlots.allSatisfy { $0["member_id"] is NSNull })
            let slotSSRC = try #require(SessionDescription(parsing: sdp).media.first { $0.mid == "1" }?.sources.first?.ssrc)

            for listener in [bob, carol] {
                let slots = try Self.slots(listener.socket, room, carrying: alice.member)
                #expect(slots.first?["mid"] as? String == "1" && slots.first?["member_id"] as? String == alice.member)
            }
            let sent = (1...3).map { Self.payload("alice says \($0)") }
            for payload in sent { try alice.media.send(payload, level: 40) }
            for listener in [bob, carol] {
                let received = try listener.media.waitForPacket { $0.payload == sent[2] }
                #expect(received.map(\.payload) == sent)
                #expect(Set(received.map(\.ssrc)).count == 1)
            }
            #expect(Set(bob.media.received.map(\.ssrc)) == [slotSSRC])
            let sequences = bob.media.received.map(\.sequence)
            #expect(zip(sequences, sequences.dropFirst()).allSatisfy { $1 == $0 &+ 1 })
            #expect(app.metrics.mediaSessions.load() == 3)
            #expect(app.metrics.mediaPacketsForwarded.load() == 6)
            // Alice was sent nothing: no slot of hers carries anyone, and her own packets never come back.
            #expect(alice.media.received.isEmpty)
            #expect(!alice.socket.log.contains { $0["type"] as? String == "media:slots" })
        }
    }

    @Test func aMutedSpeakerReachesNobody() throws {
        try withServer { app in
            let harness = try Harness(app)
            let room = try createRoom(app)
            let alice = try harness.join(room, "alice", speaker: true)
            let bob = try harness.join(room, "bob", speaker: false)
            _ = try Self.slots(bob.socket, room, carrying: alice.member)

            _ = try alice.socket.call("audio:mute:on", ["cid": room])
            harness.mediaSettled()
            _ = try Self.slots(bob.socket, room, carrying: nil)
            for index in 1...5 { try alice.media.send(Self.payload("muted \(index)"), level: 20) }
            _ = try alice.socket.call("audio:mute:off", ["cid": room])
            harness.mediaSettled()
            let marker = Self.payload("unmuted")
            try alice.media.send(marker, level: 20)
            let received = try bob.media.waitForPacket { $0.payload == marker }
            #expect(received.map(\.payload) == [marker], "a packet sent while muted was forwarded")
        }
    }

    @Test func aListenerWhoSendsReachesNobody() throws {
        try withServer { app in
            let harness = try Harness(app)
            let aliceToken = try token(app, "alice")
            let created = try http(app, "POST", "/rooms", json: #"{"display_name":"Stage","properties":{"mode":"stage"}}"#, token: aliceToken)
            let room = try #require(created.object["id"] as? String)
            let alice = try harness.join(room, "alice", speaker: true, socket: try TestWebSocket(port: app.port, token: aliceToken))
            // Bob is a listener but sends anyway: his answer refuses his microphone, and the server drops what comes.
            let bob = try harness.join(room, "bob", speaker: false, sends: true)
            let bobSDP = try #require(bob.answer["sdp"] as? String)
            #expect(try SessionDescription(parsing: bobSDP).media.first?.direction == .inactive)
            let aliceSDP = try #require(alice.answer["sdp"] as? String)
            #expect(try SessionDescription(parsing: aliceSDP).media.first?.direction == .recvonly)
            let carol = try harness.join(room, "carol", speaker: false)
            _ = try Self.slots(carol.socket, room, carrying: alice.member)

            let droppedBefore = app.media?.onLoop { $0.droppedPackets } ?? 0
            for index in 1...5 { try bob.media.send(Self.payload("bob \(index)"), level: 10) }
            let marker = Self.payload("alice")
            try alice.media.send(marker, level: 30)
            let received = try carol.media.waitForPacket { $0.payload == marker }
            #expect(received.map(\.payload) == [marker], "a listener's packet was forwarded")
            #expect((app.media?.onLoop { $0.droppedPackets } ?? 0) - droppedBefore >= 5)
            #expect(!alice.media.received.contains { $0.payload.starts(with: Self.payload("bob")) })
            #expect(!carol.socket.log.contains { message in
                message["type"] as? String == "media:slots"
                    && ((message["body"] as? [String: Any])?["slots"] as? [[String: Any]] ?? []).contains { $0["member_id"] as? String == bob.member }
            })
        }
    }

    @Test func aMemberOfAnotherRoomNeverReceives() throws {
        try withServer { app in
            let harness = try Harness(app)
            let first = try createRoom(app, "First"), second = try createRoom(app, "Second")
            let alice = try harness.join(first, "alice", speaker: true)
            let bob = try harness.join(first, "bob", speaker: false)
            let dave = try harness.join(second, "dave", speaker: true)
            let erin = try harness.join(second, "erin", speaker: false)
            _ = try Self.slots(bob.socket, first, carrying: alice.member)
            _ = try Self.slots(erin.socket, second, carrying: dave.member)

            let fromFirst = Self.payload("first room")
            try alice.media.send(fromFirst, level: 30)
            try bob.media.waitForPacket { $0.payload == fromFirst }
            let marker = Self.payload("second room")
            try dave.media.send(marker, level: 30)
            let received = try erin.media.waitForPacket { $0.payload == marker }
            #expect(received.map(\.payload) == [marker], "audio crossed rooms")
            #expect(!dave.media.received.contains { $0.payload == fromFirst })
            #expect(!erin.socket.log.contains { ($0["type"] as? String) == "media:slots" && ($0["cid"] as? String) == first })
        }
    }

    @Test func leavingAndClosingStopForwarding() throws {
        try withServer({ $0.rooms.gracePeriod = .milliseconds(200) }) { app in
            let harness = try Harness(app)
            let room = try createRoom(app)
            let alice = try harness.join(room, "alice", speaker: true)
            let bob = try harness.join(room, "bob", speaker: false)
            let carol = try harness.join(room, "carol", speaker: false)
            _ = try Self.slots(carol.socket, room, carrying: alice.member)
            #expect(harness.mediaSessions == 3)

            _ = try carol.socket.call("conversation:leave", ["cid": room])
            harness.mediaSettled()
            #expect(harness.mediaSessions == 2)
            _ = try bob.socket.call("media:close", ["cid": room])
            harness.mediaSettled()
            #expect(harness.mediaSessions == 1)
            _ = try bob.socket.call("media:close", ["cid": room])  // nothing left to close: still fine

            // Dave's packets show the server handled alice's before them.
            let dave = try harness.join(room, "dave", speaker: false)
            _ = try Self.slots(dave.socket, room, carrying: alice.member)
            let marker = Self.payload("after leaving")
            try alice.media.send(marker, level: 30)
            try dave.media.waitForPacket { $0.payload == marker }
            #expect(carol.media.received.isEmpty)
            #expect(bob.media.received.isEmpty)

            // A connection that closes keeps its session while its member may come back; when the grace period
            // drops the member, the session ends.
            dave.socket.drop()
            _ = try alice.socket.event("member:left", in: room, member: dave.member)
            harness.mediaSettled()
            #expect(harness.mediaSessions == 1)
        }
    }

    /// A client whose WebSocket dropped keeps hearing the room, and its new connection renegotiates the same peer
    /// connection: same ICE credentials, the DTLS association goes on, no second session.
    @Test func aReconnectedClientTakesItsSessionOver() throws {
        try withServer { app in
            let harness = try Harness(app)
            let room = try createRoom(app)
            let alice = try harness.join(room, "alice", speaker: true)
            let bob = try harness.join(room, "bob", speaker: false)
            _ = try Self.slots(bob.socket, room, carrying: alice.member)
            let firstICE = try SessionDescription(parsing: try #require(bob.answer["sdp"] as? String)).remoteICE

            bob.socket.drop()
            try alice.socket.sync()
            harness.mediaSettled()
            #expect(harness.mediaSessions == 2)
            let during = Self.payload("while bob's socket is down")
            try alice.media.send(during, level: 30)
            try bob.media.waitForPacket { $0.payload == during }

            let again = try TestWebSocket(app, name: "bob")
            #expect(try again.join(room)["member_id"] as? String == bob.member)
            let answer = try again.call("media:offer", ["cid": room, "sdp": bob.media.offer])
            #expect(try SessionDescription(parsing: try #require(answer["sdp"] as? String)).remoteICE == firstICE)
            #expect((answer["slots"] as? [[String: Any]])?.first?["member_id"] as? String == alice.member)
            harness.mediaSettled()
            #expect(harness.mediaSessions == 2)
            let after = Self.payload("after the reconnect")
            try alice.media.send(after, level: 30)
            try bob.media.waitForPacket { $0.payload == after }

            // The session is the new connection's now.
            _ = try again.call("media:close", ["cid": room])
            harness.mediaSettled()
            #expect(harness.mediaSessions == 1)
        }
    }

    /// A client that reconnects with a new RTCPeerConnection (another certificate) gets a new session; the old
    /// connection's session ends then.
    @Test func aReconnectedClientWithANewPeerConnectionReplacesItsSession() throws {
        try withServer { app in
            let harness = try Harness(app)
            let room = try createRoom(app)
            let alice = try harness.join(room, "alice", speaker: true)
            let bob = try harness.join(room, "bob", speaker: false)
            bob.socket.drop()
            try alice.socket.sync()
            harness.mediaSettled()
            #expect(harness.mediaSessions == 2)

            let again = try harness.join(room, "bob", speaker: false, socket: try TestWebSocket(app, name: "bob"))
            #expect(again.member == bob.member)
            _ = try Self.slots(again.socket, room, carrying: alice.member)
            harness.mediaSettled()
            #expect(harness.mediaSessions == 2)
            let marker = Self.payload("to the new peer connection")
            try alice.media.send(marker, level: 30)
            try again.media.waitForPacket { $0.payload == marker }
            #expect(!bob.media.received.contains { $0.payload == marker })
        }
    }

    @Test func theServerDecidesWhoIsSpeakingFromTheAudioLevel() throws {
        try withServer { app in
            let harness = try Harness(app)
            let room = try createRoom(app)
            let alice = try harness.join(room, "alice", speaker: true)
            let bob = try harness.join(room, "bob", speaker: false)

            try alice.media.startStreaming(Self.payload("loud"), level: 20)
            let on = try bob.socket.event("audio:speaking:on", in: room, member: alice.member)
            #expect(on["id"] == nil)
            try alice.media.startStreaming(Self.payload("quiet"), level: 127)
            _ = try bob.socket.event("audio:speaking:off", in: room, member: alice.member)
            try alice.media.stopStreaming()

            // A client whose audio goes through the server: its own word is answered and ignored.
            _ = try bob.socket.call("audio:speaking:on", ["cid": room])
            try bob.socket.sync()
            try alice.socket.sync()
            #expect(!alice.socket.log.contains { ($0["type"] as? String) == "audio:speaking:on" && ($0["from"] as? String) == bob.member })
            // A client without a media session (one still on the mesh) reports its own, as before.
            let carol = try TestWebSocket(app, name: "carol")
            let carolMember = try #require(try carol.join(room)["member_id"] as? String)
            _ = try carol.call("audio:speaking:on", ["cid": room])
            _ = try alice.socket.event("audio:speaking:on", in: room, member: carolMember)
        }
    }

    @Test func offersNeedAJoinedConnectionAndAUsableSDP() throws {
        try withServer { app in
            let room = try createRoom(app)
            let hello = try TestWebSocket(port: app.port, token: try token(app, "alice"), awaitSession: false)
            let session = try hello.next { $0["type"] as? String == "session:success" }
            let media = (session["body"] as? [String: Any])?["media"] as? [String: Any]
            #expect(media?["mode"] as? String == "sfu")
            #expect(media?["slots"] as? Int == 8)

            let client = try MediaTestClient(loop: try EventLoop(name: "unused"), slots: 2)
            #expect(errorCode(try hello.request("media:offer", ["cid": room, "sdp": client.offer])) == "member:error:not-joined")
            _ = try hello.join(room)
            #expect(errorCode(try hello.request("media:offer", ["cid": room, "sdp": "hello"])) == "request:error:invalid-field")
            #expect(errorCode(try hello.request("media:offer", ["cid": room])) == "request:error:missing-field")
            let tooMany = try MediaTestClient(loop: try EventLoop(name: "unused"), slots: 9)
            let refused = try hello.request("media:offer", ["cid": room, "sdp": tooMany.offer])
            #expect(errorCode(refused) == "request:error:invalid-field")
            let detail = (refused["body"] as? [String: Any])?["detail"] as? String
            #expect(detail?.contains("receive m-lines") == true)
            #expect(errorCode(try hello.request("media:offer", ["cid": room, "sdp": String(repeating: "v", count: 17 * 1024)]))
                    == "request:error:invalid-field")
        }
    }

    @Test func meshServersSayMeshAndRefuseOffers() throws {
        try withServer({ $0.rooms.mediaMode = .mesh }) { app in
            #expect(app.media == nil)
            let room = try createRoom(app)
            let hello = try TestWebSocket(port: app.port, token: try token(app, "alice"), awaitSession: false)
            let session = try hello.next { $0["type"] as? String == "session:success" }
            #expect(((session["body"] as? [String: Any])?["media"] as? [String: Any])?["mode"] as? String == "mesh")
            _ = try hello.join(room)
            #expect(errorCode(try hello.request("media:offer", ["cid": room, "sdp": "v=0"])) == "request:error:unknown-type")
        }
    }
}

extension SFUTests {
    /// With more senders than a client's slots, the loudest recent one gets the slot.
    @Test func theLoudestSenderTakesTheOnlySlot() throws {
        try withServer({ $0.rooms.maxForwardedSpeakers = 1 }) { app in
            let harness = try Harness(app)
            let room = try createRoom(app)
            let alice = try harness.join(room, "alice", speaker: true, slots: 1)
            let bob = try harness.join(room, "bob", speaker: true, slots: 1)
            let carol = try harness.join(room, "carol", speaker: false, slots: 1)
            #expect((carol.answer["slots"] as? [[String: Any]])?.count == 1)
            _ = try Self.slots(carol.socket, room, carrying: alice.member)  // first come, first served
            try alice.media.send(Self.payload("alice, quiet"))
            try carol.media.waitForPacket { $0.payload == Self.payload("alice, quiet") }

            try bob.media.startStreaming(Self.payload("bob, loud"), level: 10)
            _ = try Self.slots(carol.socket, room, carrying: bob.member)
            let received = try carol.media.waitForPacket { $0.payload == Self.payload("bob, loud") }
            try bob.media.stopStreaming()
            // One stream for carol across the switch: the slot's SSRC, sequence numbers going on from alice's.
            #expect(Set(received.map(\.ssrc)).count == 1)
            let sequences = received.map(\.sequence)
            #expect(zip(sequences, sequences.dropFirst()).allSatisfy { $1 == $0 &+ 1 })
        }
    }

    /// Adding a microphone renegotiates the same peer connection: same ICE credentials and DTLS association, and
    /// the new sender reaches the others at once.
    @Test func aListenerWhoAddsAMicrophoneReoffersWithoutANewHandshake() throws {
        try withServer { app in
            let harness = try Harness(app)
            let room = try createRoom(app)
            let alice = try harness.join(room, "alice", speaker: true)
            let bob = try harness.join(room, "bob", speaker: false)
            let first = try SessionDescription(parsing: try #require(bob.answer["sdp"] as? String))
            #expect(first.media.first?.direction == .inactive, "no track offered: nothing to receive")

            _ = try bob.socket.call("audio:enable", ["cid": room])
            bob.media.sends = true
            let again = try bob.socket.call("media:offer", ["cid": room, "sdp": bob.media.offer])
            let second = try SessionDescription(parsing: try #require(again["sdp"] as? String))
            #expect(second.media.first?.direction == .recvonly, "an open room's member may send: its microphone is received")
            #expect(second.remoteICE == first.remoteICE)
            let kept = again["slots"] as? [[String: Any]] ?? []
            #expect(kept.first?["member_id"] as? String == alice.member, "the reply to a renegotiation keeps the slots' senders")
            #expect(second.media.map { $0.sources.first?.ssrc } == first.media.map { $0.sources.first?.ssrc })
            _ = try Self.slots(alice.socket, room, carrying: bob.member)
            #expect(harness.mediaSessions == 2)

            let hello = Self.payload("bob joins in")
            try bob.media.send(hello, level: 30)
            try alice.media.waitForPacket { $0.payload == hello }
        }
    }

    /// Strangers on the media port: garbage of every first-byte class, DTLS and SRTP from an address that never
    /// passed a check, a check with the wrong password. None is forwarded or harms the sessions.
    @Test func strangersOnTheMediaPortAreIgnored() throws {
        try withServer { app in
            let harness = try Harness(app)
            let room = try createRoom(app)
            let alice = try harness.join(room, "alice", speaker: true)
            let bob = try harness.join(room, "bob", speaker: false)
            _ = try Self.slots(bob.socket, room, carrying: alice.member)
            let media = try #require(app.media)
            let port = media.localAddress.port
            let aliceAnswer = try SessionDescription(parsing: try #require(alice.answer["sdp"] as? String))
            let ufrag = try #require(aliceAnswer.remoteICE?.usernameFragment)

            let stranger = try RawUDPSocket()
            let droppedBefore = media.onLoop { $0.droppedPackets }
            let garbage: [[UInt8]] = [[], [0x00], [0x17, 0xFE, 0xFD] + Array(repeating: 0xEE, count: 40), [0x80] + Array(repeating: 1, count: 30),
                                      [0x80, 0xC8, 0x00, 0x01, 0, 0, 0, 1], [0xFF, 0xFF], Array(repeating: 0x41, count: 1400)]
            for datagram in garbage { try stranger.send(datagram, toPort: port) }
            // A check naming alice's session but signed with the wrong password: no answer (issue 34), no mapping.
            let unauthenticatedBefore = media.onLoop { $0.unauthenticatedRequests }
            let check = STUNMessage(type: .bindingRequest, transactionID: Array(repeating: 3, count: 12),
                                    attributes: [.username("\(ufrag):nope"), .iceControlling(tieBreaker: 1), .useCandidate])
                .serialized(integrityKey: Array("not-the-password-at-all!".utf8), fingerprint: true)
            try stranger.send(check, toPort: port)

            let marker = Self.payload("still fine")
            try alice.media.send(marker, level: 30)
            let received = try bob.media.waitForPacket { $0.payload == marker }
            #expect(received.map(\.payload) == [marker])
            #expect(media.onLoop { $0.droppedPackets } - droppedBefore >= 4)
            #expect(media.onLoop { $0.unauthenticatedRequests } - unauthenticatedBefore == 1)
            #expect(stranger.receive(within: 0.2) == nil)
            #expect(harness.mediaSessions == 2)
        }
    }
}

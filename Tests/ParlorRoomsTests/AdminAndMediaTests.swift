import ParlorProtocol
@testable import ParlorRooms
import Testing

/// Kick, mute, connection drops, revocation, reset, media state and watching, without a socket.
@Suite struct AdminAndMediaTests {
    @Test(arguments: StoreKind.allCases) func kickEndsTheMembershipWithReasonKicked(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let alice = try rooms.connect("alice")
        let bob = try rooms.connect("bob")
        let memberID = try rooms.joinQuietly([alice, bob], to: roomID)[0]

        #expect(try rooms.perform(.kick(roomID: roomID, memberID: memberID)).get() == .object([:]))
        for client in [alice, bob] {
            let kicked = rooms.messages(client)
            #expect(kicked.map(\.type) == ["member:left"])
            #expect(kicked.first?.body?["reason"]?.stringValue == "kicked")
        }
        #expect(throws: RoomError(.memberNotFound, "\(memberID) is not a joined member of room \(roomID)")) {
            try rooms.perform(.kick(roomID: roomID, memberID: memberID)).get()
        }
    }

    @Test(arguments: StoreKind.allCases) func muteIsStoredAndSeenByEveryone(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let alice = try rooms.connect("alice")
        let bob = try rooms.connect("bob")
        let joined = rooms.request(.join(cid: roomID), from: alice)
        rooms.request(.join(cid: roomID), from: bob)
        _ = rooms.messages(bob)
        let memberID = try #require(joined.body?["member_id"]?.stringValue)

        _ = try rooms.perform(.mute(roomID: roomID, memberID: memberID)).get()
        let muted = rooms.messages(bob)
        #expect(muted.map(\.type) == ["audio:mute:on"])
        #expect(muted.first?.body?["media"]?["audio_settings"]?["muted"] == .bool(true))
        #expect(try rooms.storedMembers(roomID).first { $0.memberID == memberID }?.audioMuted == true)
        _ = try rooms.perform(.mute(roomID: roomID, memberID: memberID)).get()
        #expect(rooms.messages(bob).isEmpty, "muting a muted member changes nothing")
    }

    @Test(arguments: StoreKind.allCases) func mediaStateIsStoredAndSpeakingIsOnlyBroadcast(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store) { $0.maxAudioSenders = 1 }
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let alice = try rooms.connect("alice")
        let bob = try rooms.connect("bob")
        rooms.request(.join(cid: roomID), from: alice)
        rooms.request(.join(cid: roomID), from: bob)
        _ = rooms.messages(bob)

        #expect(rooms.request(.media(cid: roomID, change: .enable), from: alice).type == "audio:enable:success")
        let enabled = rooms.messages(bob)
        #expect(enabled.map(\.type) == ["member:media"])
        #expect(enabled.first?.body?["media"]?["audio_settings"]?["enabled"] == .bool(true))
        #expect(rooms.request(.media(cid: roomID, change: .enable), from: bob).errorCode == "media:error:too-many-senders")

        rooms.request(.media(cid: roomID, change: .speaking(true)), from: alice)
        #expect(rooms.messages(bob).map(\.type) == ["audio:speaking:on"])
        rooms.request(.media(cid: roomID, change: .mute(true)), from: alice)
        #expect(rooms.messages(bob).map(\.type) == ["audio:mute:on"])
        #expect(try rooms.storedEvents(roomID).map(\.type) == ["member:joined", "member:joined", "member:media", "audio:mute:on"])
        let stored = try #require(try rooms.storedMembers(roomID).first { $0.user.name == "alice" })
        #expect(stored.audioEnabled && stored.audioMuted)

        rooms.request(.media(cid: roomID, change: .disable), from: alice)
        #expect(rooms.request(.media(cid: roomID, change: .enable), from: bob).type == "audio:enable:success", "a sender's place is free again")
    }

    @Test(arguments: StoreKind.allCases) func signallingGoesOnlyToItsTarget(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let alice = try rooms.connect("alice")
        let bob = try rooms.connect("bob")
        let carol = try rooms.connect("carol")
        let memberIDs = try rooms.joinQuietly([alice, bob, carol], to: roomID)
        let bobMember = memberIDs[1]

        let sent = rooms.request(.signal(kind: .rtcOffer, cid: roomID, to: bobMember, payload: ["sdp": "v=0"]), from: alice)
        #expect(sent.type == "rtc:offer:success")
        let offer = rooms.messages(bob)
        #expect(offer.map(\.type) == ["rtc:offer"])
        #expect(offer.first?["from"] == .string(memberIDs[0]))
        #expect(offer.first?.body?["sdp"] == .string("v=0"))
        #expect(rooms.messages(carol).isEmpty)
        #expect(try rooms.storedEvents(roomID).count == 3, "signalling is not stored")
    }

    @Test(arguments: StoreKind.allCases) func watchersReceiveEventsWithoutAMembershipUntilTheyUnwatch(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let alice = try rooms.connect("alice")
        let dashboard = try rooms.connect("dashboard")
        let watch = rooms.request(.watch(cid: roomID), from: dashboard)
        #expect(watch.type == "conversation:watch:success")
        #expect(watch.body?["last_event_id"] == JSONValue(0))

        rooms.request(.join(cid: roomID), from: alice)
        #expect(rooms.messages(dashboard).map(\.type) == ["member:joined"])
        #expect(try rooms.storedMembers(roomID).count == 1, "a watcher is no member")

        #expect(rooms.request(.unwatch(cid: roomID), from: dashboard).type == "conversation:unwatch:success")
        rooms.request(.leave(cid: roomID), from: alice)
        #expect(rooms.messages(dashboard).isEmpty)
        #expect(rooms.request(.watch(cid: "RM-nope"), from: dashboard).errorCode == "room:error:not-found")
    }

    /// A member's connection that also watches its room gets each event once; a watcher alone gets it too.
    @Test func aMemberWhoAlsoWatchesGetsEachEventOnce() throws {
        let rooms = try RoomsHarness(.sqlite)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let alice = try rooms.connect("alice"), bob = try rooms.connect("bob"), dashboard = try rooms.connect("dashboard")
        rooms.request(.join(cid: roomID), from: alice)
        #expect(rooms.request(.watch(cid: roomID), from: alice).type == "conversation:watch:success")
        #expect(rooms.request(.watch(cid: roomID), from: dashboard).type == "conversation:watch:success")
        _ = rooms.messages(alice)
        rooms.request(.join(cid: roomID), from: bob)
        #expect(rooms.messages(alice).map(\.type) == ["member:joined"])
        #expect(rooms.messages(dashboard).map(\.type) == ["member:joined"])
    }

    @Test(arguments: StoreKind.allCases) func droppedConnectionsAreCutAfterTheCommitAndTheMemberGetsItsGracePeriod(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let alice = try rooms.connect("alice")
        let aliceElsewhere = try rooms.connect("alice")
        let memberID = try rooms.joinQuietly([alice, aliceElsewhere], to: roomID)[0]

        #expect(try rooms.perform(.dropConnections(roomID: roomID, memberID: memberID)).get() == ["connections": JSONValue(2)])
        for client in [alice, aliceElsewhere] {
            guard case .drop = try #require(rooms.deliveries(client).last) else {
                Issue.record("the connection was not dropped")
                continue
            }
        }
        #expect(try rooms.storedMembers(roomID, state: .joined).count == 1, "a cut connection is a disconnect, not a leave")
    }

    @Test(arguments: StoreKind.allCases) func revokingAUserEndsItsMembershipsThenClosesItsConnections(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let alice = try rooms.connect("alice")
        let bob = try rooms.connect("bob")
        try rooms.joinQuietly([alice, bob], to: roomID)

        let result = try rooms.perform(.disconnectUser(userIDs: [alice.user.id], reason: "revoked")).get()
        #expect(result == ["connections": JSONValue(1)])
        let seen = rooms.deliveries(alice)
        guard seen.count == 2, case .message(let left, _) = seen[0], case .close(let code) = seen[1] else {
            Issue.record("expected member:left then a close, got \(seen)")
            return
        }
        #expect(left.body?["reason"]?.stringValue == "kicked")
        #expect(code == ParlorCloseCode.tokenRevoked)
        #expect(rooms.messages(bob).map(\.type) == ["member:left"])
    }

    @Test(arguments: StoreKind.allCases) func resetForgetsEverythingAndClosesEveryConnection(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let alice = try rooms.connect("alice")
        rooms.request(.join(cid: roomID), from: alice)
        _ = rooms.messages(alice)

        _ = try rooms.perform(.reset).get()
        guard case .close(let code) = try #require(rooms.deliveries(alice).last) else {
            Issue.record("no close after the reset")
            return
        }
        #expect(code == ParlorCloseCode.serverReset)
        #expect(try rooms.storedRoom(roomID) == nil)
        #expect(rooms.pendingTimers == 1, "only the session sweep is left")
    }
}

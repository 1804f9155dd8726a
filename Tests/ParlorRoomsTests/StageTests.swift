import ParlorProtocol
@testable import ParlorRooms
import Testing

/// Stage rooms without a socket: roles on joining, hands, promotion and demotion, mute-all, lock, bans (with the
/// manual clock for expiry), the last moderator's successor, and REST moderation rights.
@Suite struct StageTests {
    /// A stage room created by alice, with alice (moderator) and bob, carol (listeners) joined; their member ids.
    private func stage(_ rooms: RoomsHarness) throws -> (room: String, alice: ClientRef, bob: ClientRef, carol: ClientRef,
                                                         ids: [String: String]) {
        let alice = try rooms.connect("alice")
        let roomID = try rooms.createRoom(by: alice, mode: .stage)
        let bob = try rooms.connect("bob")
        let carol = try rooms.connect("carol")
        var ids: [String: String] = [:]
        for (name, client) in [("alice", alice), ("bob", bob), ("carol", carol)] {
            ids[name] = try #require(rooms.request(.join(cid: roomID), from: client).body?["member_id"]?.stringValue)
        }
        for client in [alice, bob, carol] { _ = rooms.messages(client) }
        return (roomID, alice, bob, carol, ids)
    }

    private func roles(_ rooms: RoomsHarness, _ roomID: String) throws -> [String: MemberRole] {
        Dictionary(uniqueKeysWithValues: try rooms.storedMembers(roomID, state: .joined).map { ($0.user.name, $0.role) })
    }

    @Test(arguments: StoreKind.allCases) func rolesOnJoiningFollowTheModeAndTheCreator(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let (roomID, _, bob, _, _) = try stage(rooms)
        #expect(try roles(rooms, roomID) == ["alice": .moderator, "bob": .listener, "carol": .listener])
        #expect(try rooms.storedRoom(roomID)?.mode == .stage)

        let open = try rooms.createRoom(by: bob)
        let dave = try rooms.connect("dave")
        let reply = rooms.request(.join(cid: open), from: dave)
        #expect(reply.body?["role"]?.stringValue == "speaker")
        #expect(reply.body?["mode"]?.stringValue == "open")
        rooms.request(.join(cid: open), from: bob)
        #expect(try roles(rooms, open) == ["bob": .moderator, "dave": .speaker])

        let creatorless = try rooms.createRoom(mode: .stage)
        rooms.request(.join(cid: creatorless), from: dave)
        rooms.request(.join(cid: creatorless), from: bob)
        #expect(try roles(rooms, creatorless) == ["dave": .moderator, "bob": .listener], "the first member moderates")
    }

    @Test(arguments: StoreKind.allCases) func aListenerCannotSendAudio(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let (roomID, alice, bob, _, _) = try stage(rooms)
        #expect(rooms.request(.media(cid: roomID, change: .enable), from: bob).errorCode == "member:error:not-allowed")
        #expect(rooms.request(.media(cid: roomID, change: .enable), from: alice).type == "audio:enable:success")
    }

    @Test(arguments: StoreKind.allCases) func handsQueueInTheOrderRaisedAndOnlyModeratorsLowerOthers(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let (roomID, alice, bob, carol, ids) = try stage(rooms)
        rooms.request(.stage(cid: roomID, action: .raiseHand), from: carol)
        rooms.request(.stage(cid: roomID, action: .raiseHand), from: bob)
        rooms.request(.stage(cid: roomID, action: .raiseHand), from: bob)
        let events = rooms.messages(alice)
        #expect(events.map(\.type) == ["member:hand", "member:hand"], "raising a raised hand sends nothing")
        #expect(events.first?.body?["raised"] == .bool(true))
        #expect(events.first?.body?["member_id"]?.stringValue == ids["carol"])

        let hands = rooms.request(.members(cid: roomID, query: MembersQuery(pageSize: 10, cursor: nil, descending: false, state: nil,
                                                                         handsRaised: true)), from: alice)
        #expect(hands.body?["members"]?.arrayValue?.compactMap { $0["user"]?["name"]?.stringValue } == ["carol", "bob"])
        #expect(hands.body?["members"]?.arrayValue?.first?["hand_raised"] == .bool(true))

        #expect(rooms.request(.stage(cid: roomID, action: .lowerHand(memberID: ids["carol"])), from: bob).errorCode
                == "member:error:not-allowed")
        #expect(rooms.request(.stage(cid: roomID, action: .lowerHand(memberID: ids["bob"])), from: bob).type
                == "member:hand:lower:success", "naming oneself needs no moderator")
        rooms.request(.stage(cid: roomID, action: .lowerHand(memberID: ids["carol"])), from: alice)
        let lowered = rooms.messages(carol).filter { $0.type == "member:hand" }.last
        #expect(lowered?.body?["raised"] == .bool(false))
        #expect(lowered?.body?["by"]?.stringValue == ids["alice"])
        #expect(try rooms.storedEvents(roomID).filter { $0.type == "member:hand" }.count == 4, "hand changes are stored")
    }

    @Test(arguments: StoreKind.allCases) func aMemberWhoLeavesLeavesTheQueueOfHands(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let (roomID, _, bob, _, _) = try stage(rooms)
        rooms.request(.stage(cid: roomID, action: .raiseHand), from: bob)
        rooms.request(.leave(cid: roomID), from: bob)
        rooms.request(.join(cid: roomID), from: bob)
        let bobListed = try rooms.storedMembers(roomID, state: .joined).first { $0.user.name == "bob" }
        #expect(bobListed?.handRaisedAt == nil)
        #expect(bobListed?.role == .listener)
    }

    @Test(arguments: StoreKind.allCases) func promotionLowersTheHandAndDemotionStopsTheAudio(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let (roomID, alice, bob, carol, ids) = try stage(rooms)
        let bobID = try #require(ids["bob"])
        rooms.request(.stage(cid: roomID, action: .raiseHand), from: bob)
        _ = rooms.messages(carol)
        #expect(rooms.request(.stage(cid: roomID, action: .setRole(memberID: bobID, role: .speaker)), from: alice).type
                == "member:role:success")
        let promoted = rooms.messages(carol)
        #expect(promoted.map(\.type) == ["member:hand", "member:role"])
        #expect(promoted.last?.body?["role"]?.stringValue == "speaker")
        #expect(promoted.last?.body?["by"]?.stringValue == ids["alice"])
        #expect(rooms.request(.media(cid: roomID, change: .enable), from: bob).type == "audio:enable:success")
        _ = rooms.messages(carol)

        rooms.request(.stage(cid: roomID, action: .setRole(memberID: bobID, role: .listener)), from: alice)
        let demoted = rooms.messages(carol)
        #expect(demoted.map(\.type) == ["member:role", "member:media"])
        #expect(demoted.last?.body?["media"]?["audio_settings"]?["enabled"] == .bool(false))
        #expect(rooms.request(.media(cid: roomID, change: .enable), from: bob).errorCode == "member:error:not-allowed")
        #expect(rooms.request(.stage(cid: roomID, action: .setRole(memberID: bobID, role: .speaker)), from: carol).errorCode
                == "member:error:not-allowed")
    }

    @Test(arguments: StoreKind.allCases) func stageSpeakersCountAgainstTheSenderCap(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store) { $0.maxAudioSenders = 2 }
        defer { rooms.stop() }
        let (roomID, alice, _, _, ids) = try stage(rooms)
        rooms.request(.stage(cid: roomID, action: .setRole(memberID: try #require(ids["bob"]), role: .speaker)), from: alice)
        let refused = rooms.request(.stage(cid: roomID, action: .setRole(memberID: try #require(ids["carol"]), role: .speaker)), from: alice)
        #expect(refused.errorCode == "media:error:too-many-senders")
        #expect(try roles(rooms, roomID)["carol"] == .listener)
    }

    @Test(arguments: StoreKind.allCases) func muteAllMutesEveryUnmutedSenderButTheModerator(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let alice = try rooms.connect("alice")
        let roomID = try rooms.createRoom(by: alice)
        let bob = try rooms.connect("bob")
        let carol = try rooms.connect("carol")
        for client in [alice, bob, carol] { rooms.request(.join(cid: roomID), from: client) }
        for client in [alice, bob] { rooms.request(.media(cid: roomID, change: .enable), from: client) }
        _ = rooms.messages(carol)
        let reply = rooms.request(.stage(cid: roomID, action: .muteAll), from: alice)
        #expect(reply.body?["muted"] == JSONValue(1))
        let muted = rooms.messages(carol)
        #expect(muted.map(\.type) == ["audio:mute:on"])
        #expect(muted.first?.body?["by"] != nil && muted.first?.body?["by"] != .null)
        #expect(rooms.request(.media(cid: roomID, change: .mute(false)), from: bob).type == "audio:mute:off:success",
                "a muted member may unmute itself")
        #expect(rooms.request(.stage(cid: roomID, action: .muteAll), from: bob).errorCode == "member:error:not-allowed")
        // An open room's speakers have no role row until a hand goes up: the hand is stored all the same.
        rooms.request(.stage(cid: roomID, action: .raiseHand), from: carol)
        #expect(try rooms.storedMembers(roomID, state: .joined).first { $0.user.name == "carol" }?.handRaisedAt != nil)
    }

    @Test(arguments: StoreKind.allCases) func aLockedRoomRefusesNewUsersButNotItsOwn(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let (roomID, alice, bob, _, _) = try stage(rooms)
        rooms.request(.stage(cid: roomID, action: .lock(true)), from: alice)
        #expect(rooms.messages(bob).map(\.type) == ["room:locked"])
        let dave = try rooms.connect("dave")
        #expect(rooms.request(.join(cid: roomID), from: dave).errorCode == "room:error:locked")
        rooms.request(.leave(cid: roomID), from: bob)
        #expect(rooms.request(.join(cid: roomID), from: bob).type == "conversation:join:success", "bob was a member before")
        #expect(try rooms.storedRoom(roomID)?.locked == true)
        rooms.request(.stage(cid: roomID, action: .lock(false)), from: alice)
        #expect(rooms.request(.join(cid: roomID), from: dave).type == "conversation:join:success")
    }

    @Test(arguments: StoreKind.allCases) func aBanKicksAndRefusesTheUserAndItsAddressUntilItExpires(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let alice = try rooms.connect("alice", address: "10.0.0.1")
        let roomID = try rooms.createRoom(by: alice, mode: .stage)
        let bob = try rooms.connect("bob", address: "10.0.0.2")
        let carol = try rooms.connect("carol", address: "10.0.0.2")
        for client in [alice, bob, carol] { rooms.request(.join(cid: roomID), from: client) }
        _ = rooms.messages(alice)

        let reply = rooms.request(.stage(cid: roomID, action: .ban(userID: bob.user.id, seconds: 60)), from: alice)
        #expect(reply.body?["until"]?.stringValue != nil)
        let left = rooms.messages(alice)
        #expect(left.map(\.type) == ["member:left"])
        #expect(left.first?.body?["reason"]?.stringValue == "kicked")
        #expect(rooms.request(.join(cid: roomID), from: bob).errorCode == "room:error:banned")
        let mallory = try rooms.connect("mallory", address: "10.0.0.2")
        #expect(rooms.request(.join(cid: roomID), from: mallory).errorCode == "room:error:banned", "a new name from the banned address")
        rooms.request(.leave(cid: roomID), from: carol)
        #expect(rooms.request(.join(cid: roomID), from: carol).type == "conversation:join:success", "carol was in the room before")
        #expect(rooms.request(.stage(cid: roomID, action: .ban(userID: alice.user.id, seconds: 60)), from: alice).errorCode
                == "request:error:invalid-field")

        rooms.advance(seconds: 59)
        #expect(rooms.request(.join(cid: roomID), from: bob).errorCode == "room:error:banned")
        rooms.advance(seconds: 1)
        #expect(rooms.request(.join(cid: roomID), from: bob).type == "conversation:join:success")
        #expect(try roles(rooms, roomID)["bob"] == .listener)
    }

    @Test(arguments: StoreKind.allCases) func whenTheLastModeratorLeavesTheLongestPresentSpeakerTakesOver(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let (roomID, alice, _, carol, ids) = try stage(rooms)
        rooms.request(.stage(cid: roomID, action: .setRole(memberID: try #require(ids["carol"]), role: .speaker)), from: alice)
        rooms.request(.stage(cid: roomID, action: .setRole(memberID: try #require(ids["bob"]), role: .speaker)), from: alice)
        _ = rooms.messages(carol)
        rooms.request(.leave(cid: roomID), from: alice)
        let events = rooms.messages(carol)
        #expect(events.map(\.type) == ["member:left", "member:role"])
        #expect(events.last?.body?["member_id"]?.stringValue == ids["bob"], "bob joined before carol")
        #expect(events.last?.body?["by"] == .null)

        // Roles are kept per user: alice comes back a moderator, and after a restart nothing has changed.
        rooms.request(.join(cid: roomID), from: alice)
        try rooms.restart()
        #expect(try roles(rooms, roomID) == ["alice": .moderator, "bob": .moderator, "carol": .speaker])
    }

    @Test(arguments: StoreKind.allCases) func chatIsStoredAndRateLimitedReactionsAreNot(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let (roomID, alice, bob, _, _) = try stage(rooms)
        for index in 1...5 {
            #expect(rooms.request(.stage(cid: roomID, action: .message(.text("hi \(index)"))), from: bob).body?["id"] != nil)
        }
        #expect(rooms.request(.stage(cid: roomID, action: .message(.text("six"))), from: bob).errorCode == "message:error:rate-limited")
        let texts = rooms.messages(alice).filter { $0.type == "message:text" }
        #expect(texts.count == 5)
        #expect(texts.first?.body?["text"]?.stringValue == "hi 1")
        #expect(texts.first?["id"] != nil)
        rooms.advance(seconds: 10)
        #expect(rooms.request(.stage(cid: roomID, action: .message(.text("later"))), from: bob).type == "message:send:success")

        let before = try rooms.storedEvents(roomID).count
        for _ in 1...10 { rooms.request(.stage(cid: roomID, action: .reaction(emoji: "👏")), from: bob) }
        #expect(rooms.request(.stage(cid: roomID, action: .reaction(emoji: "👏")), from: bob).errorCode == "reaction:error:rate-limited")
        let reactions = rooms.messages(alice).filter { $0.type == "reaction" }
        #expect(reactions.count == 10)
        #expect(reactions.first?["id"] == nil)
        #expect(try rooms.storedEvents(roomID).count == before, "reactions are not stored")
    }

    @Test(arguments: StoreKind.allCases) func restModerationIsForTheCreatorAndAdminsOnly(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let (roomID, alice, bob, _, ids) = try stage(rooms)
        #expect(throws: RoomError.self) {
            try rooms.perform(.moderate(roomID: roomID, action: .lock(true), by: .user(bob.user))).get()
        }
        #expect(try rooms.perform(.moderate(roomID: roomID, action: .lock(true), by: .user(alice.user))).get() == .object([:]))
        _ = try rooms.perform(.moderate(roomID: roomID, action: .setRole(memberID: try #require(ids["bob"]), role: .speaker),
                                        by: .admin)).get()
        let role = rooms.messages(bob).last
        #expect(role?.type == "member:role")
        #expect(role?.body?["by"] == .null)
    }
}

/// The text rules of chat messages and reactions, and the rate window.
@Suite struct StageRulesTests {
    @Test(arguments: StoreKind.allCases) func chatTextFollowsTheNameRulesWithLineBreaks(_ store: StoreKind) throws {
        #expect(TextRules.checkChat("  e\u{301}\nnext line ") == .success("\u{E9}\nnext line"))
        #expect(throws: TextRuleViolation.self) { try TextRules.checkChat("   ").get() }
        #expect(throws: TextRuleViolation.self) { try TextRules.checkChat("evil \u{202E}txt").get() }
        #expect(throws: TextRuleViolation.self) { try TextRules.checkChat("hid\u{200B}den").get() }
        #expect(throws: TextRuleViolation.self) { try TextRules.checkChat(String(repeating: "a", count: 2_001)).get() }
        #expect(throws: TextRuleViolation.self) { try TextRules.checkChat(String(repeating: "👍🏽", count: 1_500)).get() }
        #expect(TextRules.checkChat(String(repeating: "a", count: 2_000)) == .success(String(repeating: "a", count: 2_000)))
    }

    @Test func aReactionIsOneEmoji() {
        for emoji in ["👏", "❤️", "👍🏽", "👩‍👩‍👧"] { #expect((try? TextRules.checkReaction(emoji).get()) == emoji) }
        for bad in ["", "a", "1", "👏👏", "👏\u{202E}", "👍🏽" + String(repeating: "\u{FE0F}", count: 9)] {
            #expect(throws: TextRuleViolation.self) { try TextRules.checkReaction(bad).get() }
        }
    }

    @Test func theRateWindowSlides() {
        var window = RateWindow(RateWindow.Limit(count: 2, milliseconds: 1000))
        let admitted = [0, 500, 999, 1000, 1400, 1500].map { window.admit(at: Int64($0)) }
        #expect(admitted == [true, true, false, true, false, true])
    }

    @Test func initialRoles() {
        #expect(StageRules.initialRole(mode: .stage, isCreator: true, roomHasCreator: true, roomHasRoles: true) == .moderator)
        #expect(StageRules.initialRole(mode: .stage, isCreator: false, roomHasCreator: true, roomHasRoles: false) == .listener)
        #expect(StageRules.initialRole(mode: .stage, isCreator: false, roomHasCreator: false, roomHasRoles: false) == .moderator)
        #expect(StageRules.initialRole(mode: .open, isCreator: false, roomHasCreator: false, roomHasRoles: false) == .speaker)
    }
}

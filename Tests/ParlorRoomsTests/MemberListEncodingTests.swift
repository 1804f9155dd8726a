import ParlorProtocol
@testable import ParlorRooms
import Testing

/// The join reply's member list, spliced from each member's cached bytes, is byte for byte the list built as a
/// `JSONValue` tree, in every state a member can be in and after every kind of change.
@Suite struct MemberListEncodingTests {
    static func treeEncoded(_ room: LiveRoom) -> [UInt8] {
        JSONValue.array(room.sortedMembers.map { room.record(of: $0).json }).encoded()
    }

    /// Checks twice: once filling the cache, once from it.
    static func expectSameBytes(_ room: LiveRoom, _ comment: Comment) {
        #expect(room.encodedMemberList() == treeEncoded(room), comment)
        #expect(room.encodedMemberList() == treeEncoded(room), comment)
    }

    @Test func theCachedListMatchesTheTreeThroughEveryChange() {
        let room = LiveRoom(record: RoomRecord(id: "RM-1", name: "r", displayName: "R", createdBy: "u1", createdAt: 0, closedAt: nil,
                                               ttl: 60, maxMembers: nil, memberCount: 0, lastEventID: 0), emptySince: nil)
        Self.expectSameBytes(room, "empty")
        room.add(LiveMember(id: "MEM-a", user: User(id: "u1", name: "Ann"), joinedAt: 1_700_000_000_001))
        room.add(LiveMember(id: "MEM-b", user: User(id: "u2", name: "Bo \"the\" \\ one\n\t\u{7F}"), joinedAt: 1_700_000_000_002))
        room.add(LiveMember(id: "MEM-c", user: User(id: "u3", name: "Zoë 🎙"), joinedAt: 1_700_000_000_003))
        Self.expectSameBytes(room, "joined, default state")

        let before = room.encodedMemberList()
        room.update("MEM-a") { $0.audioEnabled = true }
        Self.expectSameBytes(room, "audio enabled")
        #expect(room.encodedMemberList() != before)
        room.update("MEM-a") { $0.audioMuted = true }
        Self.expectSameBytes(room, "audio muted")

        room.setRole(.moderator, of: "u1")
        room.setRole(.listener, of: "u3")
        Self.expectSameBytes(room, "moderator and listener")
        room.setHand(raisedAt: 1_700_000_000_500, of: "u3")
        Self.expectSameBytes(room, "hand raised")
        #expect(room.setHand(raisedAt: nil, of: "u3") == 1_700_000_000_500)
        Self.expectSameBytes(room, "hand lowered")
        room.setRole(.speaker, of: "u3")
        Self.expectSameBytes(room, "promoted")

        var stage = RoomStage()
        stage.roles = ["u1": (.listener, 1_700_000_000_900), "u2": (.moderator, nil)]
        room.load(stage)
        Self.expectSameBytes(room, "roles and hands reloaded")

        room.remove("MEM-b")
        Self.expectSameBytes(room, "one left")
        room.add(LiveMember(id: "MEM-d", user: User(id: "u2", name: "Bo again"), joinedAt: 1_700_000_001_000))
        room.setHand(raisedAt: 1_700_000_001_001, of: "u2")
        Self.expectSameBytes(room, "back as a new member with a hand up")
    }

    /// The record's own writer against the tree, also for what a live list never holds (a LEFT member).
    @Test func aRecordWritesTheBytesOfItsTree() {
        var left = MemberRecord(memberID: "MEM-x", user: User(id: "u9", name: "Éva \"x\""), state: .left,
                                joinedAt: 1_700_000_000_000, leftAt: 1_700_000_360_123, audioEnabled: true, audioMuted: false)
        #expect(left.encoded() == left.json.encoded())
        left.role = .listener
        left.handRaisedAt = 1_700_000_100_000
        #expect(left.encoded() == left.json.encoded())
    }
}

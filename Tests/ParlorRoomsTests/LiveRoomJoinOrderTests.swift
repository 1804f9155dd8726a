@testable import ParlorRooms
import Testing

/// `LiveRoom` keeps its members in join order as they come and go, and records which users became or stopped being
/// members for `LiveUsers`, instead of sorting and recounting the room after every command.
@Suite struct LiveRoomJoinOrderTests {
    static func emptyRoom() -> LiveRoom {
        LiveRoom(record: RoomRecord(id: "RM-1", name: "r", displayName: "R", createdBy: "u0", createdAt: 0, closedAt: nil,
                                    ttl: 60, maxMembers: nil, memberCount: 0, lastEventID: 0), emptySince: nil)
    }

    @Test func membersStayInJoinOrderThroughRandomJoinsAndLeaves() {
        let room = Self.emptyRoom()
        var generator = SystemRandomNumberGenerator()
        var expected: [String: LiveMember] = [:]
        for step in 0..<2_000 {
            if expected.isEmpty || Int.random(in: 0..<3, using: &generator) > 0 {
                // Times collide on purpose: the id breaks ties, as the store's ORDER BY joined_at, id does.
                let member = LiveMember(id: "MEM-\(step)", user: User(id: "u\(step)", name: "n"), joinedAt: Int64.random(in: 0..<50, using: &generator))
                room.add(member)
                expected[member.id] = member
            } else {
                let gone = expected.keys.randomElement(using: &generator)!
                #expect(room.remove(gone)?.id == gone)
                expected[gone] = nil
            }
        }
        let order = expected.values.sorted { ($0.joinedAt, $0.id) < ($1.joinedAt, $1.id) }.map(\.id)
        #expect(room.sortedMembers.map(\.id) == order)
        #expect(room.joinOrder.map(\.id) == order)
    }

    @Test func addingAMemberAgainKeepsOneEntry() {
        let room = Self.emptyRoom()
        let member = LiveMember(id: "MEM-a", user: User(id: "u1", name: "Ann"), joinedAt: 5)
        room.add(member)
        room.add(LiveMember(id: "MEM-b", user: User(id: "u2", name: "Bo"), joinedAt: 3))
        room.add(member)
        #expect(room.joinOrder.map(\.id) == ["MEM-b", "MEM-a"])
    }

    @Test func userChangesAreRecordedOnceTheRoomWasCountedWhole() throws {
        let room = Self.emptyRoom()
        room.add(LiveMember(id: "MEM-a", user: User(id: "u1", name: "Ann"), joinedAt: 1))
        #expect(room.takeUserChanges() == nil)  // a new room object is counted whole first
        room.add(LiveMember(id: "MEM-b", user: User(id: "u2", name: "Bo"), joinedAt: 2))
        room.remove("MEM-a")
        room.add(LiveMember(id: "MEM-c", user: User(id: "u1", name: "Ann"), joinedAt: 3))
        room.remove("MEM-nobody")
        let changes = try #require(room.takeUserChanges())
        #expect(changes.map { "\($0.userID) \($0.joined)" } == ["u2 true", "u1 false", "u1 true"])
        #expect(try #require(room.takeUserChanges()).isEmpty)
    }

    @Test func liveUsersFollowTheChanges() {
        let users = LiveUsers()
        users.sync(room: "RM-1", members: ["u1"])
        users.apply(room: "RM-1", [("u2", true), ("u1", false), ("u1", true), ("u1", true), ("u3", false)])
        #expect(users.contains("u1") && users.contains("u2") && !users.contains("u3"))
        users.apply(room: "RM-1", [("u1", false), ("u2", false)])
        #expect(!users.contains("u1") && !users.contains("u2"))
        // Another room and an open session count separately.
        users.apply(room: "RM-2", [("u1", true)])
        users.connectionOpened("u1")
        users.sync(room: "RM-2", members: [])
        #expect(users.contains("u1"))
        users.connectionClosed("u1")
        #expect(!users.contains("u1"))
    }
}

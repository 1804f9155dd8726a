import Testing
import ParlorProtocol
@testable import ParlorRooms

/// `LiveMember.eventBody` writes the body of member:joined and member:left by hand; its bytes must stay those of
/// the tree they replaced, for every name a user may have and every reason a member leaves.
@Suite struct MemberEventBodyTests {
    static let names = ["bob", "quote \" backslash \\ tab \t control \u{01}", "é 😀 </script>", ""]

    @Test(arguments: names)
    func bodiesAreTheTreesBytes(name: String) {
        let member = LiveMember(id: "MEM-\u{7f}9", user: User(id: "USR-\"1", name: name), joinedAt: 1_764_554_420_251)
        let joined: JSONValue = ["member_id": .string(member.id), "user": member.user.json]
        #expect(member.eventBody() == joined.encoded())
        for reason in [LeaveReason.left, .dropped, .kicked, .roomClosed] {
            let left: JSONValue = ["member_id": .string(member.id), "user": member.user.json, "reason": .string(reason.rawValue)]
            #expect(member.eventBody(reason: reason) == left.encoded())
        }
    }
}

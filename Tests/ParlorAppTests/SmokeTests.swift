import Foundation
import Testing
@testable import ParlorApp

@Suite struct SmokeTests {
    @Test func tutorialFlowOverWebSocket() throws {
        try withServer { app in
            let room = try createRoom(app)
            let alice = try TestWebSocket(app, name: "alice")
            let bob = try TestWebSocket(app, name: "bob")
            let joined = try alice.join(room)
            #expect(memberNames(joined) == ["alice"])
            let bobJoin = try bob.join(room)
            #expect(memberNames(bobJoin) == ["alice", "bob"])
            let seen = try alice.event("member:joined", in: room, member: bobJoin["member_id"] as? String)
            #expect((seen["body"] as? [String: Any])?["user"] as? [String: Any] != nil)
            _ = try bob.call("conversation:leave", ["cid": room])
            let left = try alice.event("member:left", in: room, member: bobJoin["member_id"] as? String)
            #expect((left["body"] as? [String: Any])?["reason"] as? String == "left")
        }
    }
}

import Foundation
import Testing
import ParlorApp

/// `parlor room lock|unlock|mute-all`, `parlor members --hands` and `parlor say` against a live server.
@Suite struct StageCLITests {
    @Test func moderateListHandsAndSay() throws {
        try withServer(AdminTests.admin) { app in
            let server = "http://127.0.0.1:\(app.port)"
            let aliceToken = try token(app, "alice")
            let created = try http(app, "POST", "/rooms", json: #"{"display_name":"Class","properties":{"mode":"stage"}}"#, token: aliceToken)
            let room = try #require(created.object["id"] as? String)
            let alice = try TestWebSocket(port: app.port, token: aliceToken)
            _ = try alice.join(room)
            let bob = try TestWebSocket(app, name: "bob")
            let bobMember = try #require(try bob.join(room)["member_id"] as? String)
            _ = try bob.call("member:hand:raise", ["cid": room])

            let hands = try CLITests.run(["members", room, "--hands", "--json", "--server", server])
            let list = try JSONSerialization.jsonObject(with: Data(hands.output.utf8)) as? [[String: Any]]
            #expect(list?.map { $0["member_id"] as? String } == [bobMember])
            #expect(list?.first?["role"] as? String == "listener")
            #expect(list?.first?["hand_raised"] as? Bool == true)

            #expect(try CLITests.run(["room", "lock", room, "--token", aliceToken, "--server", server]).status == 0)
            #expect((try bob.event("room:locked", in: room)["body"] as? [String: Any])?["locked"] as? Bool == true)
            let bobToken = try token(app, "bob")
            #expect(try CLITests.run(["room", "unlock", room, "--token", bobToken, "--server", server]).status == 1,
                    "only the creator or an admin")
            #expect(try CLITests.run(["room", "unlock", room, "--admin-token", AdminTests.adminToken, "--server", server]).status == 0)
            let muted = try CLITests.run(["room", "mute-all", room, "--token", aliceToken, "--json", "--server", server])
            #expect(muted.output.contains(#"{"muted":0}"#))
            #expect(try CLITests.run(["room", "explode", room, "--server", server]).status == 2)

            let said = try CLITests.run(["say", room, "Class starts now", "--token", aliceToken, "--server", server])
            #expect(said.status == 0)
            let text = try bob.event("message:text", in: room)
            #expect(text["id"] as? Int == Int(said.output.trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect((text["body"] as? [String: Any])?["text"] as? String == "Class starts now")
        }
    }

    @Test func helpListsEveryAcceptedOption() throws {
        let accepted: [String: [String]] = [
            "room": ["--server", "--token", "--admin-token", "--dev", "--json"],
            "say": ["--server", "--as", "--token", "--json"],
            "members": ["--hands"],
        ]
        try CLITests.expectAcceptedOptions(accepted)
        let top = try CLITests.run(["--help"]).output
        for command in ["room", "say"] { #expect(top.contains(command), "parlor --help lacks \(command)") }
    }
}

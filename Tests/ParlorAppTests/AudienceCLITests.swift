#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ParlorApp

/// The CLI in a big stage room's summary presence: `parlor watch` prints room:presence and room:audience readably,
/// and `parlor members --role` lists one role's members, every page.
@Suite struct AudienceCLITests {
    private static func configure(_ configuration: inout AppConfiguration) {
        configuration.rooms.fullPresenceLimit = 3
        configuration.rooms.audienceUpdateInterval = .milliseconds(100)
    }

    @Test func watchAndMembersByRole() throws {
        try withServer(Self.configure) { app in
            let server = "http://127.0.0.1:\(app.port)"
            let aliceToken = try token(app, "alice")
            let created = try http(app, "POST", "/rooms", json: #"{"display_name":"Big","properties":{"mode":"stage"}}"#, token: aliceToken)
            let room = try #require(created.object["id"] as? String)
            let alice = try TestWebSocket(port: app.port, token: aliceToken)
            _ = try alice.join(room)
            let watcher = try withTemporaryDirectory { try CLITests.Child(["watch", room, "--server", server], in: $0) }
            defer { if watcher.process.isRunning { watcher.process.terminate() } }
            // The watch is in place once its first line says so; it prints what happens from then on.
            #expect(try watcher.readLine().hasPrefix("-  watching  \(room)  after event "))

            // Four listeners: the fourth member takes the room past the limit of 3, the fourth listener is summarised.
            var listeners: [TestWebSocket] = []
            var listenerIDs: [String] = []
            for name in ["bob", "carol", "dave", "erin"] {
                let listener = try TestWebSocket(app, name: name)
                listenerIDs.append(try #require(try listener.join(room)["member_id"] as? String))
                listeners.append(listener)
            }
            var line = try watcher.readLine()
            while !line.contains("room:presence") { line = try watcher.readLine() }
            #expect(line.hasPrefix("-  room:presence  summary  4 members  up to event "), "\(line)")
            while !line.contains("room:audience") { line = try watcher.readLine() }
            #expect(line.hasPrefix("-  room:audience  4 in the audience  +erin  up to event "), "\(line)")

            let audience = try CLITests.run(["members", room, "--role", "listener", "--json", "--server", server])
            #expect(audience.status == 0)
            let list = try JSONSerialization.jsonObject(with: Data(audience.output.utf8)) as? [[String: Any]]
            #expect(list?.map { $0["member_id"] as? String } == listenerIDs)
            #expect(list?.allSatisfy { $0["role"] as? String == "listener" } == true)
            let table = try CLITests.run(["members", room, "--role", "moderator", "--server", server])
            #expect(table.status == 0 && table.output.contains("alice") && !table.output.contains("bob"), "\(table.output)")
            #expect(try CLITests.run(["members", room, "--role", "audience", "--server", server]).status == 2)
            #expect(try CLITests.run(["members", room, "--role", "listener", "--hands", "--server", server]).status == 2)

            kill(watcher.process.processIdentifier, SIGTERM)
            #expect(watcher.waitForExit(timeout: 10) == 0)
            _ = listeners
        }
    }

    @Test func membersHelpListsRole() throws {
        try CLITests.expectAcceptedOptions(["members": ["--hands", "--role"]])
    }
}

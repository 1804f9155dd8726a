#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ParlorApp
import ParlorRooms

/// The CLI as scripts use it: exit codes, --until/--timeout, --json, --token, the dev preset and the admin commands.
@Suite struct CLIScriptTests {
    typealias Child = ExecutableTests.Child

    /// Test mode with the default grace period, so a dropped client surely resumes in time.
    static func testMode(_ configuration: inout AppConfiguration) {
        configuration.adminToken = AdminTests.adminToken
        configuration.testMode = true
    }

    static func child(_ arguments: [String]) throws -> Child {
        try withTemporaryDirectory { try Child(arguments, in: $0) }
    }

    /// Starts `parlor join ROOM --as NAME …` and returns it with its member id (from the "joined" line).
    static func join(_ room: String, as name: String, _ extra: [String], port: Int) throws -> (Child, String) {
        let joiner = try child(["join", room, "--as", name, "--server", "http://127.0.0.1:\(port)"] + extra)
        let first = try JSONSerialization.jsonObject(with: Data(try joiner.readLine().utf8)) as? [String: Any]
        return (joiner, try #require(first?["member_id"] as? String))
    }

    /// Lines of `child`'s stdout until one contains `text`.
    static func line(containing text: String, from child: Child) throws -> String {
        var line = try child.readLine()
        while !line.contains(text) { line = try child.readLine() }
        return line
    }

    @Test func bareParlorPrintsHelpAndStartsNothing() throws {
        try withTemporaryDirectory { directory in
            let bare = try Child([], in: directory)
            #expect(bare.waitForExit(timeout: 10) == 2)
            #expect(bare.remainingOutput().contains("Usage: parlor <command>"))
            #expect(!FileManager.default.fileExists(atPath: directory + "/data"))
        }
        let version = try CLITests.run(["--version"])
        #expect(version.status == 0)
        #expect(version.output.hasPrefix("parlor "))
    }

    @Test func secretsAreValidatedByOneRuleEverywhere() throws {
        let short = try CLITests.runCapturingErrors(["token", "--name", "alice", "--jwt-secret", "short"])
        #expect(short.status == 2)
        #expect(short.errors.contains("at least 16 bytes"))
        #expect(try CLITests.runCapturingErrors(["serve", "--port", "0", "--database", ":memory:", "--admin-token", "short"]).status == 2)
        var configuration = AppConfiguration.testing()
        configuration.adminToken = "short"
        #expect(throws: ConfigurationError.self) { try buildApplication(configuration) }
        configuration.adminToken = nil
        configuration.jwtSecret = "short"
        #expect(throws: ConfigurationError.self) { try buildApplication(configuration) }
        #expect(throws: ConfigurationError.self) { try AppConfiguration.parse(arguments: ["--jwt-secret", "short"], environment: [:]) }
    }

    @Test func devPresetAndItsOverrides() throws {
        let dev = try AppConfiguration.parse(arguments: ["--dev"], environment: [:])
        #expect(dev.http.host == "127.0.0.1" && dev.isInMemory && dev.testMode)
        #expect(dev.jwtSecret == AppConfiguration.devJWTSecret && dev.adminToken == AppConfiguration.devAdminToken)
        #expect(dev.authRatePerIP == 0 && dev.messagesPerSecond == 0 && dev.http.webSocket.framesPerSecond == 0)
        #expect(dev.http.maxConnectionsPerIP == 0 && dev.roomCreationsPerMinute == 0 && dev.rooms.maxRoomsPerAddress == 0)
        #expect(dev.rooms.gracePeriod.seconds == AppConfiguration.devGracePeriodSeconds)
        // Every dev client comes from 127.0.0.1: the per-address and per-user limits of issue 34 are off too.
        #expect(dev.rooms.messagesPerAddressPerSecond == 0 && dev.rooms.reactionsPerAddressPerSecond == 0)
        #expect(dev.rooms.maxMediaSessionsPerUser == 0 && dev.rooms.maxMediaSessionsPerAddress == 0 && dev.rooms.mediaOfferRate == 0)
        // Flags after --dev win; flags before it are overridden by the preset.
        let after = try AppConfiguration.parse(arguments: ["--dev", "--database", "/tmp/x.db", "--grace-period", "5"], environment: [:])
        #expect(after.resolvedDatabasePath == "/tmp/x.db" && after.rooms.gracePeriod.seconds == 5)
        #expect(try AppConfiguration.parse(arguments: ["--database", "/tmp/x.db", "--dev"], environment: [:]).isInMemory)
        for arguments in [["--dev", "--host", "0.0.0.0"], ["--host", "0.0.0.0", "--dev"]] {
            #expect(throws: ConfigurationError.self) { try AppConfiguration.parse(arguments: arguments, environment: [:]) }
        }
        let refused = try CLITests.runCapturingErrors(["serve", "--dev", "--port", "0", "--host", "0.0.0.0"])
        #expect(refused.status == 2)
        #expect(refused.errors.contains("--dev"))
    }

    @Test func devServerTakesTokensMintedWithTokenDev() throws {
        let server = try ServerProcess(["--dev"])
        let minted = try CLITests.run(["token", "--dev", "--name", "alice"])
        #expect(minted.status == 0)
        let jwt = minted.output.trimmingCharacters(in: .whitespacesAndNewlines)
        let claims = try TokenService(secret: Array(AppConfiguration.devJWTSecret.utf8), timeToLiveSeconds: 1).verify(jwt)
        #expect(claims.subject == "alice")
        _ = try TestWebSocket(port: server.port, token: jwt)
        // The admin commands work with the preset's admin token.
        #expect(try CLITests.run(["reset", "--dev", "--server", "http://127.0.0.1:\(server.port)"]).status == 0)
        kill(server.pid, SIGTERM)
        #expect(server.child.waitForExit(timeout: 10) == 0)
        #expect(server.child.errorOutput().contains("DEV MODE"))
    }

    @Test func joinUntilExitsZeroWhenSeenAndFourOnTimeout() throws {
        try withServer { app in
            let room = try createRoom(app)
            let (waiter, _) = try Self.join(room, as: "bob", ["--until", "member:joined", "--timeout", "10"], port: app.port)
            let carol = try TestWebSocket(app, name: "carol")
            _ = try carol.join(room)
            #expect(waiter.waitForExit(timeout: 10) == 0)
            let (late, _) = try Self.join(room, as: "dan", ["--until", "member:left", "--timeout", "0.3"], port: app.port)
            #expect(late.waitForExit(timeout: 10) == 4)
        }
    }

    @Test func joinExitsOneWhenKickedOrTheRoomCloses() throws {
        try withServer(AdminTests.admin) { app in
            let room = try createRoom(app)
            let (joiner, member) = try Self.join(room, as: "bob", ["--json"], port: app.port)
            #expect(try http(app, "POST", "/rooms/\(room)/members/\(member)/kick", headers: AdminTests.bearer).status < 300)
            #expect(try Self.line(containing: "session:ended", from: joiner).contains("kicked"))
            #expect(joiner.waitForExit(timeout: 10) == 1)

            let (stayer, _) = try Self.join(room, as: "carol", [], port: app.port)
            #expect(try http(app, "DELETE", "/rooms/\(room)", headers: AdminTests.bearer).status == 204)
            #expect(stayer.waitForExit(timeout: 10) == 1)
            #expect(stayer.errorOutput().contains("room_closed"))
        }
    }

    @Test func joinExitsOneWhenTheServerIsGone() throws {
        let server = try ServerProcess()
        let room = try #require(try CLITests.run(["rooms", "create", "Gone", "--server", "http://127.0.0.1:\(server.port)"]).output
            .split(separator: "\n").first.map(String.init))
        let (joiner, _) = try Self.join(room, as: "bob", ["--json", "--reconnect-attempts", "2"], port: server.port)
        kill(server.pid, SIGKILL)
        #expect(try Self.line(containing: "session:reconnecting", from: joiner).contains("\"attempt\""))
        #expect(try Self.line(containing: "session:ended", from: joiner).contains("reconnect-failed"))
        #expect(joiner.waitForExit(timeout: 10) == 1)
    }

    @Test func joinReportsReconnectAndResumeAfterADrop() throws {
        try withServer(Self.testMode) { app in
            let room = try createRoom(app)
            let (joiner, member) = try Self.join(room, as: "bob", ["--json"], port: app.port)
            let dropped = try CLITests.run(["drop", room, member, "--admin-token", AdminTests.adminToken, "--server", "http://127.0.0.1:\(app.port)"])
            #expect(dropped.status == 0 && dropped.output.hasPrefix("1"))
            #expect(try Self.line(containing: "session:reconnecting", from: joiner).contains("\"attempt\""))
            let resumed = try Self.line(containing: "session:resumed", from: joiner)
            #expect(resumed.contains(room) && resumed.contains(#""lost":[]"#))
            kill(joiner.process.processIdentifier, SIGINT)
            #expect(joiner.waitForExit(timeout: 10) == 0)
        }
    }
}

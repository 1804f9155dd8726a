import Foundation
import ParlorApp
import Testing
@testable import ParlorClient

/// Refusals arrive as ParlorError carrying the server's code.
@Suite struct ErrorTests {
    @Test func joiningAnUnknownRoomThrowsRoomNotFound() async throws {
        let (app, server) = try startServer()
        defer { app.shutdown() }
        let alice = try await server.session("alice")
        let error = await parlorError { _ = try await alice.join("RM-does-not-exist") }
        #expect(error?.code == ParlorError.Code.roomNotFound)
        #expect(error?.code == "room:error:not-found")
        #expect(error?.status == nil)
        #expect(error?.isFromServer == true)
        #expect(error?.detail.contains("RM-does-not-exist") == true)
        #expect(await alice.joinedRoomIDs.isEmpty)

        // The typed catch of docs/clients.md.
        var matched = false
        do throws(ParlorError) {
            _ = try await alice.join("RM-still-missing")
        } catch where error.code == ParlorError.Code.roomNotFound {
            matched = true
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(matched)

        // The session is still usable after a refusal.
        let room = try await server.createRoom(displayName: "Real")
        let membership = try await alice.join(room.id)
        #expect(membership.roomID == room.id)
        let notJoined = await parlorError { try await alice.leave("RM-does-not-exist") }
        #expect(notJoined?.code == ParlorError.Code.roomNotFound)
        await alice.close()
    }

    @Test func leavingARoomNotJoinedThrowsNotJoined() async throws {
        let (app, server) = try startServer()
        defer { app.shutdown() }
        let room = try await server.createRoom(displayName: "Elsewhere")
        let alice = try await server.session("alice")
        let error = await parlorError { try await alice.leave(room.id) }
        #expect(error?.code == ParlorError.Code.notJoined)
        let badPage = await parlorError { _ = try await alice.members(in: room.id, pageSize: 0) }
        #expect(badPage?.code == "request:error:invalid-field")
        await alice.close()
    }

    @Test func httpErrorsCarryCodeAndStatus() async throws {
        let (app, server) = try startServer()
        defer { app.shutdown() }
        let missing = await parlorError { _ = try await server.room(id: "RM-missing") }
        #expect(missing?.code == ParlorError.Code.roomNotFound)
        #expect(missing?.status == 404)

        let badName = await parlorError { _ = try await server.auth(name: "   ") }
        #expect(badName?.code == "request:error:invalid-field")
        #expect(badName?.status == 400)

        let first = try await server.createRoom(displayName: "One", name: "taken")
        #expect(first.name == "taken")
        let taken = await parlorError { _ = try await server.createRoom(displayName: "Two", name: "taken") }
        #expect(taken?.code == ParlorError.Code.roomNameTaken)
        #expect(taken?.status == 409)
    }

    @Test func badTokenIsRefusedAtTheUpgrade() async throws {
        let (app, server) = try startServer()
        defer { app.shutdown() }
        let error = await parlorError { _ = try await server.connect(token: "not-a-jwt") }
        #expect(error?.code == ParlorError.Code.invalidToken)
        #expect(error?.status == 401)
    }

    @Test func unreachableServerAndUnsupportedURLs() async throws {
        // A port nothing listens on: bind-free ports are not guaranteed, so use one the server just released.
        let (app, _) = try startServer()
        let port = app.port
        app.shutdown()
        let gone = ParlorServer(host: "127.0.0.1", port: port, configuration: .fastForTests)
        let error = await parlorError { _ = try await gone.auth(name: "alice") }
        #expect(error?.code == ParlorError.Code.connectionFailed)

        let unsupported = await parlorError { _ = try ParlorServer(url: URL(string: "ftp://example.com")!) }
        #expect(unsupported?.code == ParlorError.Code.invalidURL)
        let noHost = await parlorError { _ = try ParlorServer(url: URL(string: "https:///rooms")!) }
        #expect(noHost?.code == ParlorError.Code.invalidURL)
        let ws = try ParlorServer(url: URL(string: "ws://127.0.0.1:9000/parlor/")!)
        #expect(ws.host == "127.0.0.1")
        #expect(ws.port == 9000)
        #expect(ws.endpoint.basePath == "/parlor")
    }
}

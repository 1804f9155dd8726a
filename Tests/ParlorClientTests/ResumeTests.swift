import Foundation
import ParlorApp
import Testing
@testable import ParlorClient

/// Automatic reconnect and session:resume after the socket drops.
@Suite struct ResumeTests {
    @Test func resumesAfterADropAndDeliversMissedEventsExactlyOnce() async throws {
        let (app, server) = try startServer()
        defer { app.shutdown() }
        let room = try await server.createRoom(displayName: "Flaky network")
        let alice = try await server.session("alice")
        let bob = try await server.session("bob")
        let carol = try await server.session("carol")
        let aliceEvents = Collector.consuming(alice.events)
        let aliceStates = Collector.consuming(alice.connectionStates)
        let bobEvents = Collector.consuming(bob.events)
        let aliceJoin = try await alice.join(room.id)
        let bobJoin = try await bob.join(room.id)
        _ = try await aliceEvents.first("bob's member:joined") { $0.isMember(.memberJoined, bobJoin.memberID) }
        let firstSessionID = await alice.sessionID

        // Drop Alice's socket and hold her reconnect until something has happened in the room.
        await alice.pauseReconnects()
        await alice.simulateNetworkDrop()
        _ = try await aliceStates.first("reconnecting") { $0.isReconnecting }
        let carolJoin = try await carol.join(room.id)
        _ = try await bobEvents.first("carol's member:joined") { $0.isMember(.memberJoined, carolJoin.memberID) }
        let whileAway = try await bob.members(in: room.id)
        #expect(whileAway.members.map(\.user.name) == ["alice", "bob", "carol"])

        await alice.resumeReconnects()
        let resumed = try await aliceStates.first("resumed") { $0.isResumed }
        guard case .resumed(let newSessionID, let resumedRooms, let lost) = resumed else { return }
        #expect(resumedRooms == [room.id])
        #expect(lost.isEmpty)
        #expect(newSessionID != firstSessionID)
        #expect(await alice.sessionID == newSessionID)
        #expect(await alice.joinedRoomIDs == [room.id])

        // The missed event arrives, then live events continue on the same stream.
        let missed = try await aliceEvents.first("carol's member:joined") { $0.isMember(.memberJoined, carolJoin.memberID) }
        #expect(missed.user?.name == "carol")
        try await carol.leave(room.id)
        _ = try await aliceEvents.first("carol's member:left") { $0.isMember(.memberLeft, carolJoin.memberID) }
        let seen = await aliceEvents.items
        #expect(seen.filter { $0.isMember(.memberJoined, carolJoin.memberID) }.count == 1)
        #expect(seen.map(\.id) == [1, 2, 3, 4])

        // Nobody saw Alice leave, and her membership is the same one.
        _ = try await bobEvents.first("carol's member:left") { $0.isMember(.memberLeft, carolJoin.memberID) }
        #expect(await !bobEvents.items.contains { $0.type == .memberLeft && $0.memberID == aliceJoin.memberID })
        let after = try await alice.members(in: room.id)
        #expect(after.members.map(\.memberID) == [aliceJoin.memberID, bobJoin.memberID])

        // A second drop resumes from the newest session id, with no pause this time.
        await alice.simulateNetworkDrop()
        let secondResume = try await aliceStates.first("second resume") { state in
            if case .resumed(let id, _, _) = state { id != newSessionID } else { false }
        }
        guard case .resumed(let thirdSessionID, let again, let lostAgain) = secondResume else { return }
        #expect(again == [room.id])
        #expect(lostAgain.isEmpty)
        #expect(await alice.sessionID == thirdSessionID)
        try await bob.leave(room.id)
        _ = try await aliceEvents.first("bob's member:left") { $0.isMember(.memberLeft, bobJoin.memberID) }
        #expect(await aliceEvents.items.map(\.id) == [1, 2, 3, 4, 5])

        for session in [alice, bob, carol] { await session.close() }
    }

    @Test func requestsMadeWhileReconnectingWaitForTheResume() async throws {
        let (app, server) = try startServer()
        defer { app.shutdown() }
        let room = try await server.createRoom(displayName: "Patience")
        let alice = try await server.session("alice")
        let states = Collector.consuming(alice.connectionStates)
        _ = try await alice.join(room.id)
        await alice.pauseReconnects()
        await alice.simulateNetworkDrop()
        _ = try await states.first("reconnecting") { $0.isReconnecting }
        async let page = alice.members(in: room.id)
        await alice.resumeReconnects()
        #expect(try await page.members.map(\.user.name) == ["alice"])
        await alice.close()
    }

    @Test func roomsWhoseMembershipEndedAreReportedLost() async throws {
        let (app, server) = try startServer { $0.rooms.gracePeriod = .milliseconds(100) }
        defer { app.shutdown() }
        let room = try await server.createRoom(displayName: "Short grace")
        let alice = try await server.session("alice")
        let bob = try await server.session("bob")
        let aliceStates = Collector.consuming(alice.connectionStates)
        let bobEvents = Collector.consuming(bob.events)
        let aliceJoin = try await alice.join(room.id)
        _ = try await bob.join(room.id)

        await alice.pauseReconnects()
        await alice.simulateNetworkDrop()
        let dropped = try await bobEvents.first("alice dropped") { $0.isMember(.memberLeft, aliceJoin.memberID) }
        #expect(dropped.reason == "dropped")
        await alice.resumeReconnects()
        let resumed = try await aliceStates.first("resumed") { $0.isResumed }
        #expect(resumed == .resumed(sessionID: await alice.sessionID, resumed: [], lost: [room.id]))
        #expect(await alice.joinedRoomIDs.isEmpty)

        // The app rejoins: a new membership.
        let rejoined = try await alice.join(room.id)
        #expect(rejoined.memberID != aliceJoin.memberID)
        #expect(rejoined.members.map(\.user.name) == ["bob", "alice"])
        await alice.close()
        await bob.close()
    }

    @Test func closingWhileReconnectingFailsWaitersAndStopsForGood() async throws {
        let (app, server) = try startServer()
        defer { app.shutdown() }
        let room = try await server.createRoom(displayName: "Closing while away")
        let alice = try await server.session("alice")
        let states = Collector.consuming(alice.connectionStates)
        let events = Collector.consuming(alice.events)
        _ = try await alice.join(room.id)
        await alice.pauseReconnects()
        await alice.simulateNetworkDrop()
        _ = try await states.first("reconnecting") { $0.isReconnecting }
        let waiting = Task { try await alice.ping() }  // waits for the reconnect that will never come
        await alice.close()
        let error = await parlorError { try await waiting.value }
        #expect(error?.code == ParlorError.Code.closed)
        try await states.waitUntilFinished()
        try await events.waitUntilFinished()
        #expect(await states.items.last == .closed(nil))
        #expect(await states.items.filter(\.isClosed).count == 1)
    }

    @Test func aRefusedTokenStopsReconnectingAtOnce() async throws {
        let (app, server) = try startServer()
        defer { app.shutdown() }
        let alice = try await server.session("alice")
        let states = Collector.consuming(alice.connectionStates)
        await alice.updateToken("revoked-or-expired")
        await alice.simulateNetworkDrop()
        let closed = try await states.first("closed") { $0.isClosed }
        guard case .closed(let error) = closed else { return }
        #expect(error?.code == ParlorError.Code.invalidToken)
        #expect(error?.status == 401)
        let attempts = await states.items.filter(\.isReconnecting).count
        #expect(attempts == 1)
    }

    @Test func givesUpAfterTheConfiguredAttempts() async throws {
        let (app, _) = try startServer()
        var configuration = ParlorClientConfiguration.fastForTests
        configuration.reconnect = ReconnectPolicy(maxAttempts: 3, initialDelay: .milliseconds(10), maxDelay: .milliseconds(20), jitter: 0)
        let server = ParlorServer(host: "127.0.0.1", port: app.port, configuration: configuration)
        let alice = try await server.session("alice")
        let states = Collector.consuming(alice.connectionStates)
        let events = Collector.consuming(alice.events)
        app.shutdown()  // close 1001, then nothing listens: every attempt is refused

        let closed = try await states.first("closed") { $0.isClosed }
        guard case .closed(let error) = closed else { return }
        #expect(error?.code == ParlorError.Code.reconnectFailed)
        let attempts = await states.items.compactMap { state -> Int? in
            if case .reconnecting(let attempt, _) = state { attempt } else { nil }
        }
        #expect(attempts == [1, 2, 3])
        try await events.waitUntilFinished()
        let failure = await parlorError { try await alice.ping() }
        #expect(failure?.code == ParlorError.Code.reconnectFailed)
    }
}

extension ResumeTests {
    /// Close code 4005 means another connection resumed this session: reconnecting would take it back and forth, so
    /// the session ends at once with `session:error:taken-over`.
    @Test func aTakenOverSessionEndsWithoutReconnecting() async throws {
        let (app, server) = try startServer()
        defer { app.shutdown() }
        let token = try await server.auth(name: "alice").jwt
        let alice = try await server.connect(token: token)
        let states = Collector.consuming(alice.connectionStates)
        let other = try await server.connect(token: token)
        defer { Task { await other.close() } }
        let sessionID = await alice.sessionID
        _ = try await other.send(RequestType.sessionResume.rawValue, ["session_id": .string(sessionID), "last_event_ids": .object(JSONObject())])

        let closed = try await states.first("closed") { $0.isClosed }
        guard case .closed(let error) = closed else { return }
        #expect(error?.code == ParlorError.Code.sessionTakenOver)
        #expect(await states.items.filter(\.isReconnecting).isEmpty)
        let failure = await parlorError { try await alice.ping() }
        #expect(failure?.code == ParlorError.Code.sessionTakenOver)
    }
}

import Foundation
import Testing
import ParlorClient
import ParlorTesting
import ParlorTestServer

/// ParlorTesting and ParlorTestServer as a consumer uses them: no `@testable`, public API only.
@Suite struct ParlorTestingTests {
    @Test func aCancelledWaitEndsOnlyItsOwnSubscriber() async throws {
        try await withParlor { parlor in
            let room = try await parlor.createRoom()
            let bob = try await parlor.session(name: "bob")
            _ = try await bob.join(room.id)
            // The obvious timeout: a wait on `events` that is cancelled. Before multicast this ended `events` for good.
            let impatient = Task { await bob.events.first { _ in false } }
            impatient.cancel()
            _ = await impatient.value
            let recorder = EventRecorder(bob)
            let other = EventRecorder(bob)
            let alice = try await parlor.session(name: "alice")
            _ = try await alice.join(room.id)
            try await recorder.expect(.memberJoined(name: "alice"), within: .seconds(5))
            try await other.expect(.memberJoined(name: "alice"), within: .seconds(5))
            var fresh = bob.events.makeAsyncIterator()
            try await alice.leave(room.id)
            let next = await fresh.next()
            #expect(next?.type == .memberLeft && next?.user?.name == "alice")
        }
    }

    @Test func expectFailsListingWhatArrived() async throws {
        try await withParlor { parlor in
            let room = try await parlor.createRoom()
            let bob = try await parlor.session(name: "bob")
            let recorder = EventRecorder(bob)
            _ = try await bob.join(room.id)
            try await recorder.expect(.memberJoined(name: "bob"))
            let line = #line + 2  // the expect below: its failure names that line, not the @Test's
            do {
                try await recorder.expect(.memberLeft(reason: .kicked), within: .milliseconds(200))
                Issue.record("expect should have timed out")
            } catch let error as EventTimeout {
                #expect(error.expected == "member:left (reason: kicked)")
                #expect(error.received.count == 1 && error.received[0].contains("member:joined #1"))
                #expect(error.description.contains("(bob)"))
                #expect(error.location == "ParlorClientTests/ParlorTestingTests.swift:\(line)")
                #expect(error.description.hasPrefix("ParlorClientTests/ParlorTestingTests.swift:\(line): no member:left"))
            }
        }
    }

    @Test func withParlorOverTLSTrustsItsSelfSignedCertificate() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parlor-tls-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withParlor({ $0.tlsSelfSigned = true; $0.dataDirectory = directory }) { parlor in
            #expect(parlor.url.scheme == "https")
            let room = try await parlor.createRoom()
            let alice = try await parlor.session(name: "alice")
            #expect(try await alice.join(room.id).members.count == 1)
        }
    }

    @Test func aStageRoomWithHandsAndRoles() async throws {
        try await withParlor { parlor in
            let room = try await parlor.createRoom("Town hall", properties: RoomProperties(mode: .stage), creator: "alice")
            #expect(room.mode == .stage)
            let alice = try await parlor.session(name: "alice")
            let bob = try await parlor.session(name: "bob")
            #expect(try await alice.join(room.id).role == .moderator)
            let membership = try await bob.join(room.id)
            #expect(membership.role == .listener)
            let aliceSees = EventRecorder(alice)
            try await bob.raiseHand(room.id)
            try await aliceSees.expect(.memberHand(raised: true, name: "bob"))
            #expect(try await alice.allRaisedHands(in: room.id).map(\.user.name) == ["bob"])
            try await parlor.setRole(.speaker, roomID: room.id, memberID: membership.memberID)
            try await aliceSees.expect(.memberRole(.speaker, name: "bob"))
        }
    }

    @Test func networkDropResumesWithoutOthersSeeingALeave() async throws {
        try await withParlor { parlor in
            let room = try await parlor.createRoom()
            let alice = try await parlor.session(name: "alice")
            let bob = try await parlor.session(name: "bob")
            _ = try await alice.join(room.id)
            _ = try await bob.join(room.id)
            let bobSees = EventRecorder(bob)
            await alice.simulateNetworkDrop()
            let resumed = try await alice.expectState(.resumed, within: .seconds(5))
            #expect(resumed == .resumed(sessionID: await alice.sessionID, resumed: [room.id], lost: []))
            try await bobSees.expectNone(.memberLeft(name: "alice"), within: .milliseconds(1200))  // past the 1 s grace
        }
    }

    @Test func serverSideDropPastTheGracePeriodIsMemberLeftDropped() async throws {
        try await withParlor { parlor in
            let room = try await parlor.createRoom()
            let alice = try await parlor.session(name: "alice")
            let bob = try await parlor.session(name: "bob")
            let membership = try await alice.join(room.id)
            _ = try await bob.join(room.id)
            let bobSees = EventRecorder(bob)
            await alice.pauseReconnects()
            try await parlor.drop(roomID: room.id, memberID: membership.memberID)
            try await alice.expectState(.reconnecting)
            let left = try await bobSees.expect(.memberLeft(reason: .dropped, memberID: membership.memberID), within: .seconds(5))
            #expect(left.user?.name == "alice")
            await alice.resumeReconnects()
            guard case .resumed(_, let resumed, let lost) = try await alice.expectState(.resumed) else { return }
            #expect(resumed.isEmpty && lost == [room.id])
        }
    }

    @Test func closeDuringAReconnectStopsIt() async throws {
        try await withParlor { parlor in
            let alice = try await parlor.session(name: "alice")
            await alice.pauseReconnects()
            await alice.simulateNetworkDrop()
            try await alice.expectState(.reconnecting)
            await alice.close()  // returns only once the held reconnect attempt has stopped
            #expect(await alice.state == .closed(nil))
            try await alice.expectState(.closed, within: .milliseconds(100))
        }
    }

    @Test func withParlorClosesSessionsAndServerWhenTheBodyThrows() async throws {
        struct Failure: Error {}
        nonisolated(unsafe) var leaked: (ParlorSession, URL)?  // set inside the body, read after it: sequential
        await #expect(throws: Failure.self) {
            try await withParlor { parlor in
                leaked = (try await parlor.session(name: "alice"), parlor.url)
                throw Failure()
            }
        }
        let (session, url) = try #require(leaked)
        #expect(await session.state == .closed(nil))
        let server = try ParlorServer(url: url, configuration: .forTests)
        await #expect(throws: ParlorError.self) { _ = try await server.rooms() }
    }

    @Test func stageRoomMatchers() async throws {
        try await withParlor { parlor in
            // The creator's session below is the same identity (the client keeps its claim): the room's moderator.
            let room = try await parlor.createRoom("Stage", properties: RoomProperties(mode: .stage), creator: "host")
            let host = try await parlor.session(name: "host")
            let guest = try await parlor.session(name: "guest")
            let recorder = EventRecorder(host)
            _ = try await host.join(room.id)
            let membership = try await guest.join(room.id)
            try await guest.raiseHand(room.id)
            try await recorder.expect(.memberHand(raised: true, name: "guest"))
            try await host.setRole(.speaker, of: membership.memberID, in: room.id)
            try await recorder.expect(.memberRole(.speaker, name: "guest"))
            try await guest.send(message: "hi", in: room.id)
            try await recorder.expect(.message(text: "hi", name: "guest", room: room.id))
        }
    }
}

import ParlorBasics
import ParlorProtocol
@testable import ParlorRooms
import Testing

/// The steps after a batch are observers `apply` calls in their registered order, after a commit and after a
/// rollback alike (RoomsService+BatchObservers.swift says why the order is what it is).
@Suite struct BatchObserverTests {
    /// Hears of every batch's end, after the standard observers.
    final class RecordingObserver: BatchObserver, Sendable {
        enum Heard: Equatable, Sendable { case commit, rollBack }
        let heard = Locked<[Heard]>([])

        func batchDidCommit(_ end: BatchEnd, in rooms: RoomsService) { heard.withLock { $0.append(.commit) } }
        func batchDidRollBack(_ end: BatchEnd, in rooms: RoomsService) { heard.withLock { $0.append(.rollBack) } }
    }

    @Test func theOrderThatMattersIsTheRegisteredOne() throws {
        let rooms = try RoomsHarness()
        defer { rooms.stop() }
        let service = rooms.service
        let names = service.thread.submitAndWait { service.batchObservers.map { String(describing: type(of: $0)) } }
        func position(_ name: String) throws -> Int { try #require(names.firstIndex(of: name), "\(name) is registered") }
        let flush = try position("DeliveryFlushObserver")
        // The forwarding unit, POST /auth's live users and the rooms version follow the batch before anyone hears of it.
        #expect(try position("MediaSyncObserver") < flush)
        #expect(try position("LiveUsersObserver") < flush)
        #expect(try position("RoomsVersionObserver") < flush)
        // An HTTP answer follows its batch's WebSocket deliveries; join latency runs to the hand-over.
        #expect(try position("CompletionsObserver") > flush)
        #expect(try position("JoinLatencyObserver") > flush)
    }

    /// The behaviour the order gives: when an operation's completion runs, its batch's events are delivered and
    /// the rooms version has grown.
    @Test(arguments: StoreKind.allCases) func aCompletionFindsItsBatchDeliveredAndTheVersionGrown(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let alice = try rooms.connect("alice"), bob = try rooms.connect("bob")
        let memberID = try rooms.joinQuietly([alice, bob], to: roomID)[1]
        let versionBefore = rooms.service.roomsVersion

        let seen = Locked<(delivered: [RecordingChannel.Received], version: UInt64)?>(nil)
        let (channel, service) = (rooms.channel, rooms.service)
        service.perform(.kick(roomID: roomID, memberID: memberID)) { _ in
            seen.withLock { $0 = (channel.take(alice.id), service.roomsVersion) }
        }
        rooms.sync()
        let (delivered, version) = try #require(seen.withLock { $0 })
        let types = delivered.compactMap { if case .message(let message, _) = $0 { message.type } else { nil } }
        #expect(types == ["member:left"])
        #expect(version > versionBefore)
    }

    /// A batch whose transaction cannot begin is a rollback: every observer hears of it (and not of a commit), and
    /// the flush still answers the request, with an error.
    @Test func aRollbackReachesTheObservers() throws {
        let rooms = try RoomsHarness()
        defer { rooms.stop() }
        let alice = try rooms.connect("alice")
        let recording = RecordingObserver()
        let service = rooms.service
        service.thread.submitAndWait { service.addBatchObserver(recording) }

        #expect(rooms.request(.ping, from: alice).type == "session:ping:success")
        #expect(recording.heard.withLock { $0 } == [.commit])

        rooms.closeStoreUnderTheService()
        let reply = rooms.request(.ping, from: alice)
        #expect(reply.errorCode != nil, "the failed batch answers with an error: \(reply)")
        #expect(recording.heard.withLock { $0 } == [.commit, .rollBack])
    }
}

import ParlorProtocol
import ParlorRooms
import Testing

/// A resume's replay is sent a page at a time, within a budget across all connections (issue 34, item 1): over it,
/// a replay waits until a page held by another connection returns, and none is lost or reordered meanwhile.
@Suite struct ReplayBudgetTests {
    private func eventIDs(_ messages: [JSONValue], in roomID: String) -> [Int] {
        messages.compactMap { $0["cid"]?.stringValue == roomID ? $0["id"]?.intValue : nil }
    }

    @Test(arguments: StoreKind.allCases) func overTheBudgetAReplayWaitsForAnotherPageToReturn(_ store: StoreKind) throws {
        // Pages of 4 KiB and a budget of one page.
        let rooms = try RoomsHarness(store) { $0.replayPageBytes = 4096; $0.replayBudgetBytes = 4096 }
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let (alice, bob, carol) = (try rooms.connect("alice"), try rooms.connect("bob"), try rooms.connect("carol"))
        rooms.request(.join(cid: roomID), from: alice)
        rooms.request(.join(cid: roomID), from: bob)
        rooms.disconnect(alice)
        rooms.disconnect(bob)
        for _ in 0..<40 {
            rooms.request(.join(cid: roomID), from: carol)
            rooms.request(.leave(cid: roomID), from: carol)
        }
        let newest = try #require(try rooms.storedEvents(roomID).last?.id)

        let aliceBack = try rooms.connect("alice")
        rooms.request(.resume(sessionID: alice.sessionID, lastEventIDs: [(roomID, Int64(0))]), from: aliceBack)
        let bobBack = try rooms.connect("bob")
        rooms.request(.resume(sessionID: bob.sessionID, lastEventIDs: [(roomID, Int64(0))]), from: bobBack)
        var aliceSaw = eventIDs(rooms.messages(aliceBack), in: roomID)
        var bobSaw = eventIDs(rooms.messages(bobBack), in: roomID)
        #expect(!aliceSaw.isEmpty && aliceSaw.count < Int(newest), "a first page, not the whole history")
        #expect(bobSaw.isEmpty, "the budget is Alice's page: Bob waits")

        // Alice's page drained: it returns to the budget, and Bob, first in line, gets his.
        rooms.service.replayNext(aliceBack)
        rooms.sync()
        bobSaw += eventIDs(rooms.messages(bobBack), in: roomID)
        aliceSaw += eventIDs(rooms.messages(aliceBack), in: roomID)
        #expect(!bobSaw.isEmpty)
        #expect(aliceSaw.count < Int(newest), "Alice waits behind Bob now")

        // Each drains its pages in turn: both get every event once, in order.
        for _ in 0..<200 where aliceSaw.count < Int(newest) || bobSaw.count < Int(newest) {
            rooms.service.replayNext(aliceBack)
            rooms.service.replayNext(bobBack)
            rooms.sync()
            aliceSaw += eventIDs(rooms.messages(aliceBack), in: roomID)
            bobSaw += eventIDs(rooms.messages(bobBack), in: roomID)
        }
        #expect(aliceSaw == Array(1...Int(newest)))
        #expect(bobSaw == Array(1...Int(newest)))
    }

    @Test(arguments: StoreKind.allCases) func aSecondResumeOfASessionClosesTheFirstWith4005(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let alice = try rooms.connect("alice")
        rooms.request(.join(cid: roomID), from: alice)
        rooms.disconnect(alice)
        let first = try rooms.connect("alice")
        #expect(rooms.request(.resume(sessionID: alice.sessionID, lastEventIDs: [(roomID, Int64(0))]), from: first).type == "session:resume:success")
        _ = rooms.deliveries(first)
        let second = try rooms.connect("alice")
        #expect(rooms.request(.resume(sessionID: alice.sessionID, lastEventIDs: [(roomID, Int64(0))]), from: second).type == "session:resume:success")
        let closes = rooms.deliveries(first).compactMap { if case .close(let code) = $0 { code } else { nil } }
        #expect(closes == [ParlorCloseCode.sessionTakenOver])
        #expect(rooms.deliveries(second).allSatisfy { if case .close = $0 { false } else { true } })
    }
}

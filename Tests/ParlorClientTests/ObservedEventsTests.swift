import Foundation
import ParlorApp
import Testing
@testable import ParlorClient

/// `ParlorSession.observedEvents` (an observer beside `events`, for the CLI's join --play/--record) and the media
/// mode and slots the session read from session:success.
@Suite struct ObservedEventsTests {
    @Test func anObserverTakesNothingFromTheNextSubscriber() async throws {
        let hub = EventHub<Int>()
        hub.yield(1)  // nobody listens: kept for the next subscriber
        let observer = hub.subscribe(observing: true)
        hub.yield(2)  // only an observer listens: it sees it, and it is still kept
        var observed = observer.makeAsyncIterator()
        #expect(await observed.next() == 2, "an observer starts from the moment it asked")
        let main = hub.subscribe()
        hub.yield(3)
        hub.finish()
        var all: [Int] = []
        for await value in main { all.append(value) }
        #expect(all == [1, 2, 3])
        #expect(await observed.next() == 3)
        #expect(await observed.next() == nil)
    }

    @Test func theSessionSaysHowTheServerCarriesAudio() async throws {
        let (app, server) = try startServer { $0.rooms.maxForwardedSpeakers = 3 }
        defer { app.shutdown() }
        let session = try await server.session("alice")
        #expect(session.mediaMode == "sfu")
        #expect(session.mediaSlots == 3)
        await session.close()
    }
}

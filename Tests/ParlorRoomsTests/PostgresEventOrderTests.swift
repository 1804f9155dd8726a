import Foundation
import ParlorPostgres
import ParlorProtocol
@testable import ParlorRooms
import ParlorRoomsPostgres
import PostgresTestCluster
import Synchronization
import Testing

/// Event ids on PostgreSQL with several writers (the groundwork for several nodes): the room row's lock, taken by
/// `appendEvent` until the commit, makes ids gap-free and commit order id order.
@Suite struct PostgresEventOrderTests {
    private func makeRoom(_ store: PostgresRoomStore) throws -> String {
        let id = Identifier.make(Identifier.room)
        try store.write { transaction in
            try transaction.createRoom(RoomRecord(id: id, name: id, displayName: "Order", createdBy: nil, createdAt: 1, closedAt: nil,
                                                  ttl: 300, maxMembers: nil, memberCount: 0, lastEventID: 0), createdFrom: nil)
        }
        return id
    }

    @Test func aSecondWriterWaitsForTheFirstCommitAndTakesTheNextID() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let first = PostgresRoomStore(database: try PostgresDatabase(url: url, poolSize: 1))
        let second = PostgresRoomStore(database: try PostgresDatabase(url: url, poolSize: 1))
        defer { first.database.close(); second.database.close() }
        let observer = try PostgresConnection(url: url)
        let room = try makeRoom(first)

        let secondResult = Mutex<Result<EventRecord, any Error>?>(nil)
        let secondDone = DispatchSemaphore(value: 0)
        try first.write { transaction in
            #expect(try transaction.appendEvent(roomID: room, type: "test", from: nil, body: ["n": 1], at: 10).id == 1)
            Thread.detachNewThread {
                let result = Result { try second.write { try $0.appendEvent(roomID: room, type: "test", from: nil, body: ["n": 2], at: 20) } }
                secondResult.withLock { $0 = result }
                secondDone.signal()
            }
            // The second writer is blocked on the room's row until this transaction ends.
            try waitUntil {
                try observer.queryOne("SELECT COUNT(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")?
                    .int("n") == 1
            }
            #expect(secondResult.withLock { $0 } == nil)
        }
        secondDone.wait()
        #expect(try secondResult.withLock { try $0?.get().id } == 2)
        let stored = try first.read { try $0.events(roomID: room, since: 0, pageSize: 10) }.items
        #expect(stored.map(\.id) == [1, 2])
        #expect(stored.map(\.createdAt) == [10, 20], "commit order is id order")
        #expect(try first.read { try $0.room(id: room) }?.lastEventID == 2)
    }

    @Test func concurrentWritersLeaveNoGapAndNoRepeat() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let stores = try (0..<3).map { _ in PostgresRoomStore(database: try PostgresDatabase(url: url, poolSize: 1)) }
        defer { stores.forEach { $0.database.close() } }
        let room = try makeRoom(stores[0])
        let failures = Mutex<[String]>([])
        let done = DispatchGroup()
        for (index, store) in stores.enumerated() {
            done.enter()
            Thread.detachNewThread {
                for n in 0..<40 {
                    do {
                        _ = try store.write { try $0.appendEvent(roomID: room, type: "test", from: "w\(index)", body: ["n": JSONValue(n)], at: 1) }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
                done.leave()
            }
        }
        done.wait()
        #expect(failures.withLock { $0 }.isEmpty)
        let ids = try stores[1].read { try $0.events(roomID: room, since: 0, pageSize: 1000) }.items.map(\.id)
        #expect(ids == Array(1...120))
    }

    /// Polls what the database reports (a lock wait has no event to await); fails after about ten seconds.
    private func waitUntil(_ condition: () throws -> Bool) throws {
        for _ in 0..<10_000 {
            if try condition() { return }
            usleep(1000)
        }
        Issue.record("the condition did not hold")
    }
}

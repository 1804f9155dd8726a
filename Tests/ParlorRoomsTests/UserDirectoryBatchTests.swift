import Testing
import ParlorStore
@testable import ParlorRooms
import ParlorRoomsSQLite

/// POST /auth requests decided together in one transaction (group commit): each as if alone, in order; a blocked
/// name fails alone and the others keep what they wrote.
@Suite struct UserDirectoryBatchTests {
    @Test func aBlockedNameFailsAloneAndTheOthersAreCommitted() throws {
        let database = try Database(DatabaseConfiguration(path: ":memory:"))
        defer { database.close() }
        let users = UserDirectory(database: database)
        _ = try users.revokeTokens(name: "mallory", blockMilliseconds: 60_000)
        let requests = ["alice", "mallory", "bob", "alice"].map { UserDirectory.AuthRequest(name: $0, claim: nil) }
        let results = users.authenticate(requests, isLive: { _ in false })
        #expect(results.count == 4)
        let alice = try results[0].get(), bob = try results[2].get(), aliceAgain = try results[3].get()
        #expect(throws: UserDirectory.Blocked.self) { try results[1].get() }
        #expect(alice.user.name == "alice" && bob.user.name == "bob")
        // The second alice came after the first in the same transaction and found her identity: handed over,
        // with a new claim.
        #expect(aliceAgain.user.id == alice.user.id && aliceAgain.claim != alice.claim)
        // Committed: a fresh directory on the same database finds both, and the latest claim gets alice back.
        let reread = UserDirectory(database: database)
        #expect(try reread.findOrCreate(name: "bob").id == bob.user.id)
        let back = try reread.authenticate([.init(name: "alice", claim: aliceAgain.claim)], isLive: { _ in true })[0].get()
        #expect(back.user.id == alice.user.id && !back.isSeparateIdentity)
    }

    @Test func aFailedTransactionFailsEveryRequest() throws {
        let database = try Database(DatabaseConfiguration(path: ":memory:"))
        let users = UserDirectory(database: database)
        database.close()
        let results = users.authenticate(["a", "b"].map { .init(name: $0, claim: nil) }, isLive: { _ in false })
        #expect(results.count == 2)
        for result in results { #expect(throws: StoreError.self) { try result.get() } }
    }
}

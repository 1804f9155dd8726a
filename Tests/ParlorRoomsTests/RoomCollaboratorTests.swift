import ParlorMetrics
@testable import ParlorRooms
import Testing

/// The small collaborators the rooms service was taken apart into, on their own: who holds a session after a
/// take-over, and the per-address limits (each check written once over `ChatKind`).
@Suite struct RoomCollaboratorTests {
    @Test func aTakeOverClosesTheConnectedHolderOnly() {
        let holders = SessionHolders()
        let first = ClientID(1), second = ClientID(2), third = ClientID(3)
        holders.hold("S-1", on: first)
        // The holder is still connected: it must be closed.
        #expect(holders.takeOver("S-1", by: second, isConnected: { _ in true }) == first)
        // Taking one's own session again closes nobody.
        #expect(holders.takeOver("S-1", by: second, isConnected: { _ in true }) == nil)
        // A holder already gone is not closed.
        #expect(holders.takeOver("S-1", by: third, isConnected: { $0 != second }) == nil)
        // Once its connection closes, the session has no holder: the next resume closes nobody.
        holders.release(third)
        #expect(holders.takeOver("S-1", by: first, isConnected: { _ in true }) == nil)
    }

    @Test func theFirstHolderReleasedDoesNotReleaseTheSessionItLost() {
        let holders = SessionHolders()
        holders.hold("S-1", on: ClientID(1))
        _ = holders.takeOver("S-1", by: ClientID(2), isConnected: { _ in true })
        holders.release(ClientID(1))
        #expect(holders.takeOver("S-1", by: ClientID(3), isConnected: { _ in true }) == ClientID(2))
    }

    @Test(arguments: [ChatKind.message, .reaction])
    func anAddressAtItsRateIsRefusedAndCounted(_ kind: ChatKind) throws {
        var configuration = RoomsConfiguration()
        configuration.messagesPerAddressPerSecond = 2
        configuration.reactionsPerAddressPerSecond = 3
        let metrics = ServerMetrics()
        let limits = AddressLimits(configuration, metrics: metrics)
        let room = LiveRoomJoinOrderTests.emptyRoom()
        let allowed = kind == .message ? 2 : 3
        for _ in 0..<allowed { try limits.admit(kind, from: "10.0.0.1", in: room, at: 1_000) }
        #expect(throws: RoomError.self) { try limits.admit(kind, from: "10.0.0.1", in: room, at: 1_000) }
        #expect(metrics.rateLimitedCount(kind.perAddressMetric) == 1)
        // Another address has its own window, and a second later the first has room again.
        try limits.admit(kind, from: "10.0.0.2", in: room, at: 1_000)
        try limits.admit(kind, from: "10.0.0.1", in: room, at: 2_001)
    }

    @Test func openRoomsPerAddressCountOnlyThatAddress() throws {
        var configuration = RoomsConfiguration()
        configuration.maxRoomsPerAddress = 1
        let limits = AddressLimits(configuration, metrics: ServerMetrics())
        let room = LiveRoomJoinOrderTests.emptyRoom()
        room.createdFrom = "10.0.0.1"
        try limits.checkOpenRooms(createdFrom: "10.0.0.2", among: [room])
        #expect(throws: RoomError.self) { try limits.checkOpenRooms(createdFrom: "10.0.0.1", among: [room]) }
    }
}

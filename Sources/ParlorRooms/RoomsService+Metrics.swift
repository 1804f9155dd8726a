import ParlorHTTP
import ParlorLoop

extension RoomsService {
    /// Publishes the room and member counts the rooms thread owns, after a batch that touched a room.
    func publishRoomGauges() {
        metrics.roomsOpen.set(rooms.count)
        metrics.membersJoined.set(rooms.values.reduce(0) { $0 + $1.memberCount })
    }

    /// parlor_join_seconds: each join of the batch, from its arrival to its reply being handed to the loops.
    func observeJoinLatency(_ received: [(Command, receivedAt: UInt64)]) {
        var now: UInt64?
        for (command, receivedAt) in received {
            guard case .request(_, _, .join) = command else { continue }
            let end = now ?? MonotonicClock.now()
            now = end
            metrics.joinSeconds.observe(nanoseconds: end &- receivedAt)
        }
    }
}

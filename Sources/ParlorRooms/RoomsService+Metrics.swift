import ParlorBasics
import ParlorMetrics

extension RoomsService {
    /// Publishes the room and member counts the rooms thread owns, after a batch that touched `changed`. Only those
    /// rooms are looked at: summing every open room after every batch would cost a busy server a pass over 10,000.
    func publishRoomGauges(changed: Set<String>) {
        assertOnRoomsThread()
        for roomID in changed {
            let now = state.rooms[roomID]?.memberCount ?? 0
            state.publishedMemberTotal += now - (state.publishedMemberCounts[roomID] ?? 0)
            state.publishedMemberCounts[roomID] = now > 0 ? now : nil
            if state.rooms[roomID]?.presence.mode == .summary {
                state.publishedSummaryRooms.insert(roomID)
            } else {
                state.publishedSummaryRooms.remove(roomID)
            }
        }
        metrics.roomsSummaryPresence.set(state.publishedSummaryRooms.count)
        metrics.roomsOpen.set(state.rooms.count)
        metrics.membersJoined.set(state.publishedMemberTotal)
    }

    /// parlor_join_seconds: each join of the batch, from its arrival to its reply being handed to the loops.
    func observeJoinLatency(_ received: [(Command, receivedAt: UInt64)]) {
        assertOnRoomsThread()
        var now: UInt64?
        for (command, receivedAt) in received {
            guard case .request(_, _, .join) = command else { continue }
            let end = now ?? MonotonicClock.now()
            now = end
            metrics.joinSeconds.observe(nanoseconds: end &- receivedAt)
        }
    }
}

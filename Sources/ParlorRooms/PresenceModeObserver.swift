/// After a commit, the presence mode of each room the batch changed is the one its connections were told (its
/// room:presence, if it switched, is in the batch's deliveries); after a rollback the rooms were reloaded with the
/// mode of the last commit (RoomDirectory.reload), so there is nothing to do.
struct PresenceModeObserver: BatchObserver {
    func batchDidCommit(_ end: BatchEnd, in rooms: RoomsService) {
        for roomID in end.changedRooms {
            guard let room = rooms.state.rooms[roomID] else { continue }
            room.presence.committedMode = room.presence.mode
        }
    }

    func batchDidRollBack(_ end: BatchEnd, in rooms: RoomsService) {}
}

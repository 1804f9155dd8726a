/// Applies the membership changes of the changed rooms to `LiveUsers`, which POST /auth reads.
struct LiveUsersObserver: BatchEndObserver {
    func batchDidEnd(_ end: BatchEnd, in rooms: RoomsService) {
        rooms.syncLiveUsers(end.changedRooms)
    }
}

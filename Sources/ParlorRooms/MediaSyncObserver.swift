/// Brings the forwarding unit up to date with the rooms the batch changed (--media sfu; nothing without it).
struct MediaSyncObserver: BatchEndObserver {
    func batchDidEnd(_ end: BatchEnd, in rooms: RoomsService) {
        rooms.mediaSessions.sync(end.mediaRooms)
    }
}

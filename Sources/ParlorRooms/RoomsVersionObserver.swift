/// After a batch that changed a room: grows `roomsVersion` (what REST reads cache against) and publishes the room
/// and member gauges.
struct RoomsVersionObserver: BatchEndObserver {
    func batchDidEnd(_ end: BatchEnd, in rooms: RoomsService) {
        guard end.changedAnyRoom else { return }
        rooms.roomsDidChange()
        rooms.publishRoomGauges(changed: end.changedRooms)
    }
}

import ParlorProtocol

extension RoomsService {
    /// At start: rooms stored with a ttl above today's maximum (a flood from before the limit, or a lowered
    /// --max-room-ttl) get the maximum, so they expire instead of holding their places for a year.
    func limitStoredRooms(_ transaction: any RoomTransaction) throws {
        assertOnRoomsThread()
        let shortened = try transaction.limitOpenRoomTTLs(to: configuration.maxRoomTTL)
        if shortened > 0 {
            logger.warning("open rooms had a ttl above --max-room-ttl and were given the maximum",
                           ["rooms": String(shortened), "ttl": String(configuration.maxRoomTTL)])
        }
    }
}

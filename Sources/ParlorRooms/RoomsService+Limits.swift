import ParlorMetrics
import ParlorProtocol

extension RoomsService {
    /// Refuses a room from an address that already has its share of open rooms.
    func checkAddressCap(_ address: String?) throws {
        assertOnRoomsThread()
        guard let address, configuration.maxRoomsPerAddress > 0 else { return }
        let open = state.rooms.values.lazy.filter { $0.createdFrom == address }.count
        if open >= configuration.maxRoomsPerAddress {
            metrics.rateLimited(.roomsPerAddress)
            throw RoomError(.roomTooManyRooms,
                            "\(configuration.maxRoomsPerAddress) open rooms were already created from your address; "
                                + "close one or wait until one expires")
        }
    }

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

import ParlorPostgres
import ParlorRooms
import ParlorStore

// Rooms: creating and closing them, which the other nodes hear of (the rest is ParlorRooms' shared SQL).
extension PostgresRoomTransaction {
    /// ON CONFLICT rather than catching the violation: a failed statement would abort the whole transaction.
    func createRoom(_ room: RoomRecord, createdFrom: String?) throws {
        let inserted = try db.run(Self.insertRoom + " ON CONFLICT (name) DO NOTHING", Self.insertRoomParameters(room, createdFrom: createdFrom))
        guard inserted == 1 else { throw RoomError.nameTaken(room.name) }
        try notifyRoomChanged(room.id, eventID: 0)
    }

    func closeRoom(id: String, at time: Int64) throws {
        try db.run("UPDATE rooms SET closed_at = $1 WHERE id = $2 AND closed_at IS NULL", [.integer(time), .text(id)])
        try notifyRoomChanged(id, eventID: -1)
    }
}

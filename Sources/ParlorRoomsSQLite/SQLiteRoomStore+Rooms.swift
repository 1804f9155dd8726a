import ParlorRooms
import ParlorStore

// Rooms: creating and closing them (the rest is ParlorRooms' shared SQL).
extension SQLiteRoomTransaction {
    func createRoom(_ room: RoomRecord, createdFrom: String?) throws {
        do {
            try db.run(Self.insertRoom, Self.insertRoomParameters(room, createdFrom: createdFrom))
        } catch let error as StoreError where error.isUniqueViolation {
            throw RoomError.nameTaken(room.name)
        }
    }

    func closeRoom(id: String, at time: Int64) throws {
        try db.run("UPDATE rooms SET closed_at = ? WHERE id = ? AND closed_at IS NULL", [.integer(time), .text(id)])
    }
}

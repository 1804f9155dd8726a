import ParlorCodec
import ParlorProtocol
import ParlorLoop
import ParlorStore

extension RoomsService {
    func run(_ operation: Operation, db: SQLiteConnection, batch: inout Batch) throws -> JSONValue {
        loop.assertInLoop()
        switch operation {
        case .createRoom(let request):
            return try create(request, db: db, batch: &batch).json
        case .closeRoom(let roomID, let requester):
            try close(roomID, by: requester, db: db, batch: &batch)
            return .object([:])
        case .kick(let roomID, let memberID):
            let (room, member) = try joinedMember(memberID, in: roomID, db: db)
            batch.touchedRooms.insert(roomID)
            try end(member, in: room, reason: .kicked, db: db, batch: &batch)
            return .object([:])
        case .mute(let roomID, let memberID):
            let (room, member) = try joinedMember(memberID, in: roomID, db: db)
            batch.touchedRooms.insert(roomID)
            if let frame = try applyMedia(.mute(true), to: member, in: room, db: db) {
                for handle in room.allConnections { batch.outbox.sendEvent(frame, to: handle) }
            }
            return .object([:])
        case .dropConnections(let roomID, let memberID):
            let (room, member) = try joinedMember(memberID, in: roomID, db: db)
            let handles = room.connections(of: member.user.id)
            for handle in handles {
                handle.withConnection { $0.close() }
            }
            return ["connections": JSONValue(handles.count)]
        case .disconnectUser(let userIDs, let reason):
            // Memberships end first, so the users' own connections get member:left before the close frame.
            for room in rooms.values.sorted(by: { $0.id < $1.id }) {
                for member in room.sortedMembers where userIDs.contains(member.user.id) {
                    batch.touchedRooms.insert(room.id)
                    try end(member, in: room, reason: .kicked, db: db, batch: &batch)
                }
            }
            let handles = clients.values.filter { userIDs.contains($0.ref.user.id) }.map(\.ref.handle)
            for handle in handles { batch.outbox.close(handle, code: ParlorCloseCode.tokenRevoked, reason: reason) }
            return ["connections": JSONValue(handles.count)]
        case .reset:
            try reset(db: db, batch: &batch)
            return .object([:])
        }
    }

    private func joinedMember(_ memberID: String, in roomID: String, db: SQLiteConnection) throws -> (LiveRoom, LiveMember) {
        loop.assertInLoop()
        let room = try openRoom(roomID, db: db)
        guard let member = room.member(memberID) else {
            throw RoomError(.memberNotFound, "\(memberID) is not a joined member of room \(roomID)")
        }
        return (room, member)
    }

    /// Ends every membership with reason room_closed, then closes the room.
    func close(_ roomID: String, by requester: Requester, db: SQLiteConnection, batch: inout Batch) throws {
        loop.assertInLoop()
        let room = try openRoom(roomID, db: db)
        switch requester {
        case .admin: break
        case .user(let user):
            guard let user, user.id == room.createdBy else {
                throw RoomError(.roomForbidden, "only the room's creator or an admin can close it")
            }
        }
        batch.touchedRooms.insert(roomID)
        for member in room.sortedMembers {
            try end(member, in: room, reason: .roomClosed, db: db, batch: &batch)
        }
        if let timer = room.ttlTimer { loop.cancelTimer(timer) }
        try db.run("UPDATE rooms SET closed_at = ? WHERE id = ?", [.integer(Timestamp.nowMilliseconds()), .text(roomID)])
        rooms[roomID] = nil
        batch.notices.append(.roomFinished(room: room.summary, reason: "closed"))
        logger.info("room closed", ["room": roomID, "reason": "closed by request"])
    }

    /// Test mode: forget everything, and close every connection with 4004 (after the commit, through the outbox),
    /// so clients know their sessions and rooms are gone instead of resuming into nothing.
    private func reset(db: SQLiteConnection, batch: inout Batch) throws {
        loop.assertInLoop()
        try db.execute("DELETE FROM events; DELETE FROM members; DELETE FROM rooms; DELETE FROM sessions; DELETE FROM users;")
        for room in rooms.values {
            if let timer = room.ttlTimer { loop.cancelTimer(timer) }
            for member in room.sortedMembers { if let timer = member.dropTimer { loop.cancelTimer(timer) } }
        }
        batch.touchedRooms.formUnion(rooms.keys)
        rooms.removeAll()
        for handle in Array(clients.keys) {
            clients[handle]?.rooms.removeAll()
            batch.outbox.close(handle, code: ParlorCloseCode.serverReset, reason: "server reset")
        }
    }
}

/// Finding the room a command names.
extension Step {
    /// The open room `cid`, or the error that says why it cannot be used.
    func openRoom(_ cid: String) throws -> LiveRoom {
        if let room = rules.state.rooms[cid] { return room }
        if let stored = try store.room(id: cid), stored.closedAt != nil { throw RoomError.closed(cid) }
        throw RoomError.notFound(cid)
    }

    /// The context of the open room `cid`, for a command that changes it (RoomContext.swift).
    mutating func context(for cid: String) throws -> RoomContext {
        context(of: try openRoom(cid))
    }

    /// The open room `roomID` and its joined member `memberID` (the REST operations on a member).
    func joinedMember(_ memberID: String, in roomID: String) throws -> (LiveRoom, LiveMember) {
        let room = try openRoom(roomID)
        return (room, try room.joinedMember(memberID))
    }
}

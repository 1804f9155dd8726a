import ParlorBasics

extension RoomsService {
    /// After a batch (rooms thread): apply the membership changes of the rooms it touched, so POST /auth sees who
    /// is a member now. A room that is gone counts as empty; a new or reloaded room object is counted whole.
    func syncLiveUsers(_ roomIDs: Set<String>) {
        assertOnRoomsThread()
        for roomID in roomIDs {
            if let room = state.rooms[roomID] {
                if let changes = room.takeUserChanges() {
                    liveUsers.apply(room: roomID, changes)
                } else {
                    liveUsers.sync(room: roomID, members: Set(room.memberIDByUser.keys))
                }
            } else {
                liveUsers.sync(room: roomID, members: [])
            }
        }
    }
}

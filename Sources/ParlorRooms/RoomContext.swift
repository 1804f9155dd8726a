/// One command's hold on the room it changes: the room's live state and the store transaction the command writes
/// in (inside its savepoint). A command takes it with `Step.context(of:)` once the room is found and the command
/// allowed (`RoomsService.context(for:in:)` finds and takes in one), and taking it records the room as changed by
/// the batch: the observers after the commit (live users, media, gauges, the rooms version, the cluster) learn
/// which rooms changed from the contexts taken, not from a set each command must remember to fill.
struct RoomContext {
    let room: LiveRoom
    let store: any RoomTransaction
}

/// The rooms a batch changed: those whose contexts its commands took, and those caught up from other nodes'
/// events. Only this file adds to it.
struct ChangedRooms {
    private var touchedRooms: Set<String> = []

    var rooms: Set<String> { touchedRooms }
    var isEmpty: Bool { touchedRooms.isEmpty }

    mutating func merge(_ other: ChangedRooms) { touchedRooms.formUnion(other.touchedRooms) }

    fileprivate mutating func insert(_ roomID: String) { touchedRooms.insert(roomID) }
}

extension Step {
    /// The context of a room the command is about to change (checks passed); the batch counts the room as changed.
    @discardableResult
    mutating func context(of room: LiveRoom) -> RoomContext {
        batch.changed.insert(room.id)
        return RoomContext(room: room, store: store)
    }
}

extension Batch {
    /// A room brought up to date from what other nodes committed (or closed by them): changed, though no command
    /// of this node took its context.
    mutating func caughtUp(_ roomID: String) { changed.insert(roomID) }
}

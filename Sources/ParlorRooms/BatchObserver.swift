/// What a batch's transaction ended with, for the observers that run after it on the rooms thread.
struct BatchEnd {
    /// False: the transaction rolled back (or never began); nothing of the batch happened, and its outbox and
    /// completions hold the errors that say so (`Batch.failAll`).
    let committed: Bool
    /// Rooms whose live state the batch changed, or that were re-read after a failure.
    let changedRooms: Set<String>
    /// Whether a command changed a room (re-reads aside): the rooms version grows and the gauges are published.
    let changedAnyRoom: Bool
    /// `changedRooms` and the rooms whose media sessions may have changed without a change to the room.
    let mediaRooms: Set<String>
    let outbox: Outbox
    let completions: [() -> Void]
    /// Whether the batch recorded webhook notices (written inside its transaction).
    let recordedNotices: Bool
    /// Recordings for the engine to start and stop.
    let recordings: RecordingChanges
    /// Presence changes that did not commit, to try again.
    let retries: [(Settlement, attempt: Int)]
    /// The batch's commands with the monotonic time each arrived.
    let received: [(RoomsService.Command, receivedAt: UInt64)]

    init(_ batch: Batch, committed: Bool, retries: [(Settlement, attempt: Int)],
         received: [(RoomsService.Command, receivedAt: UInt64)]) {
        self.committed = committed
        changedRooms = batch.changed.rooms.union(batch.roomsToReload)
        changedAnyRoom = !batch.changed.isEmpty
        mediaRooms = changedRooms.union(batch.mediaRooms)
        outbox = batch.outbox
        completions = batch.completions
        recordedNotices = !batch.notices.isEmpty
        recordings = batch.recordings
        self.retries = retries
        self.received = received
    }
}

/// A step that runs after every batch's transaction, as GRDB's `TransactionObserver` hears of commits and
/// rollbacks: `RoomsService.apply` calls each registered observer in order and names none of them. What must be
/// durable with the commit is not an observer's: it is written inside the transaction (the webhook outbox rows).
/// Called on the rooms thread.
protocol BatchObserver {
    func batchDidCommit(_ end: BatchEnd, in rooms: RoomsService)
    func batchDidRollBack(_ end: BatchEnd, in rooms: RoomsService)
}

/// An observer whose step is the same after a commit and after a rollback (what it acts on says which it was).
protocol BatchEndObserver: BatchObserver {
    func batchDidEnd(_ end: BatchEnd, in rooms: RoomsService)
}

extension BatchEndObserver {
    func batchDidCommit(_ end: BatchEnd, in rooms: RoomsService) { batchDidEnd(end, in: rooms) }
    func batchDidRollBack(_ end: BatchEnd, in rooms: RoomsService) { batchDidEnd(end, in: rooms) }
}

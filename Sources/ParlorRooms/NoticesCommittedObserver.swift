/// Tells the notice recorder (the webhook outbox) that the rows it wrote inside the transaction are committed, so
/// its delivery threads wake. Nothing after a rollback: the rows are gone with it.
struct NoticesCommittedObserver: BatchObserver {
    let recorder: any RoomNoticeRecorder

    func batchDidCommit(_ end: BatchEnd, in rooms: RoomsService) {
        if end.recordedNotices { recorder.committed() }
    }

    func batchDidRollBack(_ end: BatchEnd, in rooms: RoomsService) {}
}

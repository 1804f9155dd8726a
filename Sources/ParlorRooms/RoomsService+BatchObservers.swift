extension RoomsService {
    /// The steps after every batch, in the order they run. Where the order matters, the reason is beside it and
    /// `BatchObserverTests` holds it:
    /// - the forwarding unit follows the batch before anyone hears of it (media sync before the flush: a member
    ///   told someone was muted or left no longer gets their audio);
    /// - POST /auth, REST reads and `roomsVersion` see the batch before anyone hears of it (live users and the
    ///   rooms version before the flush and the completions);
    /// - an HTTP answer follows the WebSocket deliveries of its batch (the flush before the completions: a kick's
    ///   caller finds the kicked connections closed);
    /// - join latency runs to the hand-over of the reply (after the flush).
    /// The webhook wake-up comes last and only after a commit. Cluster bookkeeping and retries need no place
    /// among these; they keep the one they had.
    static func standardBatchObservers(notices recorder: (any RoomNoticeRecorder)?) -> [any BatchObserver] {
        var observers: [any BatchObserver] = [
            MediaSyncObserver(),
            RecordingObserver(),
            ClusterBatchObserver(),
            RetryObserver(),
            LiveUsersObserver(),
            RoomsVersionObserver(),
            PresenceModeObserver(),
            DeliveryFlushObserver(),
            JoinLatencyObserver(),
            CompletionsObserver(),
        ]
        if let recorder { observers.append(NoticesCommittedObserver(recorder: recorder)) }
        return observers
    }

    /// Registers one more step after every batch, run after those registered before it (rooms thread).
    func addBatchObserver(_ observer: any BatchObserver) {
        assertOnRoomsThread()
        batchObservers.append(observer)
    }

    /// Tells every observer, in order, how the batch's transaction ended.
    func batchEnded(_ end: BatchEnd) {
        assertOnRoomsThread()
        for observer in batchObservers {
            if end.committed {
                observer.batchDidCommit(end, in: self)
            } else {
                observer.batchDidRollBack(end, in: self)
            }
        }
    }
}

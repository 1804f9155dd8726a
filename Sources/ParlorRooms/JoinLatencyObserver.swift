/// parlor_join_seconds: each join of the batch, from its arrival to its reply being handed over.
struct JoinLatencyObserver: BatchEndObserver {
    func batchDidEnd(_ end: BatchEnd, in rooms: RoomsService) {
        rooms.observeJoinLatency(end.received)
    }
}

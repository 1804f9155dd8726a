/// Schedules the presence changes that did not commit to be tried again (PresenceRetries.swift).
struct RetryObserver: BatchEndObserver {
    func batchDidEnd(_ end: BatchEnd, in rooms: RoomsService) {
        for (settlement, attempt) in end.retries { rooms.presenceRetries.schedule(settlement, attempt: attempt) }
    }
}

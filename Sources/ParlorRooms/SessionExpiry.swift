import ParlorBasics

/// Deletes sessions that ended longer ago than the grace period: they can no longer be resumed, and would otherwise
/// add a row for every connection ever made. A sweep runs as a command of its own (`due` submits it, so it is
/// applied in a batch like everything else) and is bounded, so one batch stays short. Confined to the rooms thread
/// (its timers fire there), so it is not Sendable.
final class SessionExpiry {
    private let clock: any RoomsClock
    private let gracePeriod: TimeSpan
    /// Queues a sweep (`RoomsService.Command.expireSessions`); set once by the service before its thread starts.
    var due: () -> Void = {}

    static let sessionsPerSweep = 5_000

    init(clock: any RoomsClock, gracePeriod: TimeSpan) {
        self.clock = clock
        self.gracePeriod = gracePeriod
    }

    /// How often ended sessions are looked for; a session can be resumed for the grace period after it ended.
    var interval: TimeSpan { .seconds(min(60, max(1, gracePeriod.seconds))) }

    /// Arms the next sweep, and each one after it.
    func schedule() {
        _ = clock.schedule(after: interval) { [weak self] in
            guard let self else { return }
            self.due()
            self.schedule()
        }
    }

    /// One sweep, in the batch's transaction.
    func sweep(_ store: any RoomTransaction) throws {
        let cutoff = clock.now() - Int64(gracePeriod.seconds * 1000)
        let deleted = try store.deleteSessions(endedBefore: cutoff, limit: Self.sessionsPerSweep)
        if deleted == Self.sessionsPerSweep {
            // More are waiting: go on soon, in another batch.
            _ = clock.schedule(after: .milliseconds(100)) { [weak self] in self?.due() }
        }
    }
}

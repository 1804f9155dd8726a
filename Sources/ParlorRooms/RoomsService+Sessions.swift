import ParlorLoop

extension RoomsService {
    /// How often ended sessions are looked for; a session can be resumed for the grace period after it ended.
    var sessionExpiryInterval: TimeSpan { .seconds(min(60, max(1, configuration.gracePeriod.seconds))) }

    /// Arms the next sweep of ended sessions (rooms thread).
    func scheduleSessionExpiry() {
        loop.assertInLoop()
        _ = clock.schedule(after: sessionExpiryInterval) { [weak self] in
            guard let self else { return }
            self.submit(.expireSessions)
            self.scheduleSessionExpiry()
        }
    }

    /// Deletes sessions that ended longer ago than the grace period: they can no longer be resumed, and would
    /// otherwise add a row for every connection ever made. Bounded per sweep so one batch stays short.
    func expireSessions(_ step: inout Step) throws {
        loop.assertInLoop()
        let cutoff = clock.now() - Int64(configuration.gracePeriod.seconds * 1000)
        let deleted = try step.store.deleteSessions(endedBefore: cutoff, limit: Self.sessionsExpiredPerSweep)
        if deleted == Self.sessionsExpiredPerSweep {
            // More are waiting: go on soon, in another batch.
            _ = clock.schedule(after: .milliseconds(100)) { [weak self] in self?.submit(.expireSessions) }
        }
    }

    static let sessionsExpiredPerSweep = 5_000
}

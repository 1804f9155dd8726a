import ParlorLoop
import ParlorStore

extension RoomsService {
    /// How often ended sessions are looked for; a session can be resumed for the grace period after it ended.
    var sessionExpiryInterval: TimeSpan { .seconds(min(60, max(1, configuration.gracePeriod.seconds))) }

    /// Records when a session's connection closed: from then on it can be resumed for the grace period.
    func endSession(_ sessionID: String, at now: Int64, db: SQLiteConnection) throws {
        loop.assertInLoop()
        try db.run("UPDATE sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL", [.integer(now), .text(sessionID)])
    }

    /// At start no connection is left: every session still open ended now, and gets its grace period from now.
    func endSessionsOfAPreviousRun(at now: Int64, db: SQLiteConnection) throws {
        loop.assertInLoop()
        try db.run("UPDATE sessions SET ended_at = ? WHERE ended_at IS NULL", [.integer(now)])
    }

    /// Arms the next sweep of ended sessions (rooms thread).
    func scheduleSessionExpiry() {
        loop.assertInLoop()
        _ = loop.schedule(after: sessionExpiryInterval) { [weak self] in
            guard let self else { return }
            self.submit(.expireSessions)
            self.scheduleSessionExpiry()
        }
    }

    /// Deletes sessions that ended longer ago than the grace period: they can no longer be resumed, and would
    /// otherwise add a row for every connection ever made. Bounded per sweep so one batch stays short.
    func expireSessions(db: SQLiteConnection) throws {
        loop.assertInLoop()
        let cutoff = Timestamp.nowMilliseconds() - Int64(configuration.gracePeriod.seconds * 1000)
        let deleted = try db.run("""
            DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE ended_at < ? LIMIT ?)
            """, [.integer(cutoff), .integer(Int64(Self.sessionsExpiredPerSweep))])
        if deleted == Self.sessionsExpiredPerSweep {
            // More are waiting: go on soon, in another batch.
            _ = loop.schedule(after: .milliseconds(100)) { [weak self] in self?.submit(.expireSessions) }
        }
    }

    static let sessionsExpiredPerSweep = 5_000
}

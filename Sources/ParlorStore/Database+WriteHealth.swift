import Foundation

/// Whether writes are getting through: the last failure of the storage (disk full, I/O error) until a write
/// commits again. `/healthz` reports it, so a full disk shows as unhealthy instead of as a stream of 500s.
final class WriteHealth: @unchecked Sendable {  // `failure` and `lastProbe` are only touched holding `lock`
    private let lock = NSLock()
    private var failure: (error: StoreError, since: Date)?
    private var lastProbe = Date.distantPast

    /// A transaction ended: `failure` is what the storage reported during it (even if the caller coped with it),
    /// `committedChanges` whether it committed rows. A committed change without a failure means writes work.
    func record(failure newFailure: StoreError?, committedChanges: Bool) {
        lock.withLock {
            if let newFailure {
                failure = (newFailure, failure?.since ?? Date())
            } else if committedChanges {
                failure = nil
            }
        }
    }

    var current: (error: StoreError, since: Date)? { lock.withLock { failure } }

    /// True at most once per `interval` while failing: time for a probe write.
    func probeDue(interval: TimeInterval = 1) -> Bool {
        lock.withLock {
            guard failure != nil, Date().timeIntervalSince(lastProbe) >= interval else { return false }
            lastProbe = Date()
            return true
        }
    }
}

extension SQLiteConnection {
    /// Runs a write transaction and records in `health` whether the storage failed or a change committed.
    func recordingHealth<T>(in health: WriteHealth, _ transaction: (SQLiteConnection) throws -> T) throws -> T {
        storageFailure = nil
        let changesBefore = totalChanges
        do {
            let result = try transaction(self)
            health.record(failure: storageFailure, committedChanges: totalChanges > changesBefore)
            return result
        } catch {
            health.record(failure: storageFailure ?? (error as? StoreError).flatMap { $0.isStorageFailure ? $0 : nil },
                          committedChanges: false)
            throw error
        }
    }
}

extension Database {
    /// Why writes are failing, or nil when the last write that reached the storage worked. While failing, this
    /// tries a small write now and then (at most once a second), so health recovers when space comes back even if
    /// nothing else writes.
    public func writeFailure() -> String? {
        if writeHealth.probeDue() {
            // Rewrites a row in place: the commit must reach the WAL, which a full disk refuses.
            _ = try? write { try $0.run("UPDATE schema_migrations SET applied_at = applied_at WHERE id = (SELECT MIN(id) FROM schema_migrations)") }
        }
        guard let (error, since) = writeHealth.current else { return nil }
        let seconds = Int(Date().timeIntervalSince(since))
        return "database writes are failing (for \(seconds) s): \(error.message)"
    }
}

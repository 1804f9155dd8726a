import CLibPQ

// Transactions and their state, as libpq reports it.
extension PostgresConnection {
    /// Inside a transaction, including one that an error aborted (which can only roll back).
    public var isInTransaction: Bool {
        guard let handle else { return false }
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    /// Inside a transaction that can still commit: no statement failed since the last savepoint rollback.
    public var canCommit: Bool {
        guard let handle else { return false }
        return PQtransactionStatus(handle) == PQTRANS_INTRANS
    }

    /// Runs `body` between `begin` (e.g. `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`) and `COMMIT`; rolls back
    /// if `body` or the commit throws, and rethrows. Reconnects first if the session was lost since the last use,
    /// including when `begin` is what finds out.
    public func inTransaction<T>(_ begin: String = "BEGIN", _ body: (PostgresConnection) throws -> T) throws -> T {
        let nested = isInTransaction
        if !nested { try reconnectIfNeeded() }
        do {
            try execute(begin)
        } catch {
            // The server ended the session since its last use (a restart, a cut): libpq only learns it on the next
            // statement. Nothing had started, so connecting again and beginning once more is safe.
            guard error.connectionLost, !nested else { throw error }
            try reconnectIfNeeded()
            try execute(begin)
        }
        do {
            let result = try body(self)
            // COMMIT of an aborted transaction "succeeds" as a rollback: refuse it instead of losing the work silently.
            guard canCommit else {
                throw PostgresError(message: "the transaction was aborted by an earlier error and cannot commit")
            }
            try execute("COMMIT")
            return result
        } catch {
            if isInTransaction { try? execute("ROLLBACK") }
            throw error
        }
    }
}

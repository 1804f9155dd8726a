/// Why a database could not be brought up to the binary's schema; the server refuses to start.
public enum MigrationError: Error, CustomStringConvertible {
    /// The database recorded `id` with another checksum: the file was edited after it ran.
    case changed(id: String)
    /// Applying `id` failed; its transaction was rolled back and it was not recorded.
    case failed(id: String, underlying: StoreError)
    /// After `id` ran, `PRAGMA foreign_key_check` found rows whose parent is missing (as "table row N → parent");
    /// its transaction was rolled back and it was not recorded.
    case foreignKeyViolation(id: String, violations: [String])
    /// The database has migrations this binary does not know: a newer binary ran on it.
    case unknown(ids: [String])
    /// The configuration lists the same id twice.
    case duplicate(id: String)

    public var description: String {
        switch self {
        case .changed(let id):
            "migration \(id) was already applied with a different checksum; "
                + "migrations are immutable — add a new numbered file instead"
        case .failed(let id, let underlying):
            "migration \(id) failed and was rolled back: \(underlying)"
        case .foreignKeyViolation(let id, let violations):
            "migration \(id) broke foreign keys and was rolled back: \(violations.joined(separator: ", "))"
        case .unknown(let ids):
            "the database has migration(s) \(ids.joined(separator: ", ")) that this binary does not know; "
                + "it was migrated by a newer version — run that version or restore a backup"
        case .duplicate(let id):
            "migration \(id) is listed more than once"
        }
    }
}

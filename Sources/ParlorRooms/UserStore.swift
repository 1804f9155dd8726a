/// Where `UserDirectory` keeps its users: every statement it needs, so that another database is one more
/// implementation of these protocols (a file beside `SQLiteUserStore`) while the rules stay in the directory.
public protocol UserStore: Sendable {
    /// Runs `body` in one write transaction, committed when it returns and rolled back when it throws. It blocks:
    /// never call it on an event loop.
    func write<T>(_ body: (any UserStoreTransaction) throws -> T) throws -> T
}

/// The statements of one `UserStore` write transaction. A user's `name` is its display name when it has one,
/// otherwise its handle (see `UserDirectory`).
public protocol UserStoreTransaction {
    /// The user with this id.
    func user(id: String) throws -> UserDirectory.UserStatus?
    /// The user whose claim secret has this SHA-256 (hex).
    func user(claimHash: String) throws -> UserDirectory.UserStatus?
    /// The user with this handle, inserted first (with id `newID`, created at `now`) when there is none; `hasClaim`
    /// tells whether a claim secret was set on it.
    func findOrInsert(handle: String, newID: String, now: Int64) throws -> (status: UserDirectory.UserStatus, hasClaim: Bool)
    /// Inserts a separate identity: unique `handle`, shown as `displayName`, holding the claim `claimHash`.
    func insertSeparate(id: String, handle: String, displayName: String, claimHash: String, now: Int64) throws
    /// Gives user `id` the claim `claimHash` and sets its revocation time.
    func setClaim(userID: String, claimHash: String, tokensValidAfter: Int64) throws
    /// Sets the revocation and block times of user `id` and of every user shown as `displayName`; returns them.
    func revoke(userID: String, displayName: String, tokensValidAfter: Int64, blockedUntil: Int64) throws -> [UserDirectory.UserStatus]
    /// Whether the user has a WebSocket session open on any live node sharing the store (several nodes on one
    /// database). A single process knows its own sessions without asking: false there.
    func hasSessionOnLiveNode(userID: String) throws -> Bool
    /// Whether the user runs a room that is still open: it created it, or holds the moderator role in it.
    func runsOpenRoom(userID: String) throws -> Bool
}

extension UserStoreTransaction {
    public func hasSessionOnLiveNode(userID: String) throws -> Bool { false }
}

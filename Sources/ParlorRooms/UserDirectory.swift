import ParlorBasics
import ParlorCodec
import ParlorStore

/// Users, created on first use. A name has its own identity (handle = the name: what a token with `sub` = name and no
/// `uid` means), and may have separate identities shown with the same name (handle = U+001F + id, unreachable by any
/// name), made when someone asks POST /auth for a name in live use without its claim secret (see `authenticate`).
/// Each user has a revocation time (tokens issued up to it are refused) and a block time (nothing is issued or
/// accepted until it).
public final class UserDirectory: Sendable {
    private let store: any UserStore
    /// Users are never deleted (except by a test-mode reset), so found users are cached by id, with their handle's
    /// id; the revocation and block times are updated here whenever they change.
    private let cache = Locked<Cache>(Cache())

    private struct Cache {
        var byID: [String: UserStatus] = [:]
        var idByHandle: [String: String] = [:]
    }

    /// A user with what decides whether its tokens are accepted.
    public struct UserStatus: Sendable {
        public let user: User
        /// Unix milliseconds; tokens with an iat up to it are refused (0: never).
        public var tokensValidAfter: Int64
        /// Unix milliseconds; until then the user gets no token and no token of theirs is accepted (0: never).
        public var blockedUntil: Int64
    }

    /// POST /auth's decision: who the caller is, and the claim secret to keep for next time.
    public struct Grant: Sendable {
        public let user: User
        /// The claim secret to present on the next POST /auth (the one presented, or a fresh one).
        public let claim: String
        /// A fresh identity was made because the name is in live use and no valid claim was presented.
        public let isSeparateIdentity: Bool
        /// The token's `iat`: after the identity changed hands, later than every token issued before.
        public let issuedAt: Int64
    }

    /// POST /auth was refused: the identity is blocked after a revocation.
    public struct Blocked: Error, Sendable {
        public let until: Int64
    }

    static let separateHandlePrefix = "\u{1F}"

    public init(store: any UserStore) {
        self.store = store
    }

    /// The name's own identity (tokens with `sub` = name and no `uid`), created on first use.
    public func findOrCreate(name: String) throws -> User {
        try status(handle: name).user
    }

    /// What the cache alone says about the identity a token names (see `status(subject:userID:)`).
    public enum CachedStatus: Sendable {
        /// Decided without the database: the identity, or nil when the token names a user that does not exist.
        case decided(UserStatus?)
        /// Not cached: `status(subject:userID:)` must ask the database (and may create the user).
        case notCached
    }

    /// `status(subject:userID:)` from the cache only: never touches the database, so an event loop may call it.
    public func cachedStatus(subject: String, userID: String?) -> CachedStatus {
        cache.withLock { cache in
            guard let userID else { return cache.idByHandle[subject].flatMap { cache.byID[$0] }.map { .decided($0) } ?? .notCached }
            guard let cached = cache.byID[userID] else { return .notCached }
            return .decided(cached.user.name == subject ? cached : nil)
        }
    }

    /// The identity a verified token names: `uid` when present (it must show the token's `sub` as its name), else
    /// the name's own identity. Nil when the token names a user that does not exist (or no longer, after a reset).
    /// On a cache miss this writes (the name's own identity is created on first use): call it off the event loops.
    public func status(subject: String, userID: String?) throws -> UserStatus? {
        if case .decided(let status) = cachedStatus(subject: subject, userID: userID) { return status }
        guard let userID else { return try status(handle: subject) }
        guard let found = try store.write({ try $0.user(id: userID) }) else { return nil }
        remember(found, handle: nil)
        return found.user.name == subject ? found : nil
    }

    /// One POST /auth: the name and the claim it presented. With the right `claim` (what an earlier grant returned
    /// for that name): the same identity. Otherwise the name's own identity, unless it is in live use (`isLive`:
    /// connected, or a member within its grace period) or runs a room still open (created it, or moderates it): then
    /// a fresh, separate identity with the same name. An
    /// identity handed over without its claim gets a new claim, and every token issued for it before is refused from
    /// now on (the previous holder cannot come back with an old token). A blocked identity is refused.
    public struct AuthRequest: Sendable {
        public let name: String
        public let claim: String?

        public init(name: String, claim: String?) {
            self.name = name
            self.claim = claim
        }
    }

    /// Several POST /auth in one write transaction, in order, so that requests arriving together share one commit.
    /// Each is decided as if alone (a later one sees what an earlier one wrote). A blocked identity fails alone: that
    /// is decided before its request writes anything. Any other error fails every request (nothing was committed).
    public func authenticate(_ requests: [AuthRequest], isLive: (String) -> Bool) -> [Result<Grant, any Error>] {
        let now = Timestamp.nowMilliseconds()
        let outcomes: [Result<(Grant, UserStatus), Blocked>]
        do {
            outcomes = try store.write { users in
                try requests.map { request in
                    do {
                        return .success(try Self.grant(request, in: users, now: now, isLive: isLive))
                    } catch let blocked as Blocked {
                        return .failure(blocked)
                    }
                }
            }
        } catch {
            return requests.map { _ in .failure(error) }
        }
        // The cache learns only what was committed.
        return zip(requests, outcomes).map { request, outcome in
            outcome.map { grant, status in
                remember(status, handle: grant.isSeparateIdentity ? nil : request.name)
                return grant
            }.mapError { $0 as any Error }
        }
    }

    private static func grant(_ request: AuthRequest, in users: any UserStoreTransaction, now: Int64,
                              isLive: (String) -> Bool) throws -> (Grant, UserStatus) {
        let (name, claim) = (request.name, request.claim)
        if let claim, !claim.isEmpty, claim.utf8.count <= 128, let holder = try users.user(claimHash: Self.hash(claim)) {
            if holder.user.name == name {
                if holder.blockedUntil > now { throw Blocked(until: holder.blockedUntil) }
                return (Grant(user: holder.user, claim: claim, isSeparateIdentity: false, issuedAt: now / 1000), holder)
            }
        }
        let fresh = Self.newClaim()
        let found = try users.findOrInsert(handle: name, newID: Identifier.make(Identifier.user), now: now)
        var own = found.status
        // findOrInsert wrote nothing if the row is blocked (a new row never is): a refusal leaves the batch's other
        // requests their writes.
        if own.blockedUntil > now { throw Blocked(until: own.blockedUntil) }
        // In live use here (a session or a membership), or with a session on another node of the database; or,
        // offline, running a room that is still open (its creator or a moderator): whoever took the name would
        // moderate, lock or close that room (issue 34, item 8). Such an identity comes back only with its claim, or
        // with a token from the operator (`parlor token`).
        if !isLive(own.user.id), try !users.hasSessionOnLiveNode(userID: own.user.id), try !users.runsOpenRoom(userID: own.user.id) {
            // Anyone may take a name nobody is using; whoever held it before keeps nothing: their claim and tokens end.
            let handedOver = found.hasClaim
            if handedOver { own.tokensValidAfter = now }
            try users.setClaim(userID: own.user.id, claimHash: Self.hash(fresh), tokensValidAfter: own.tokensValidAfter)
            // iat counts whole seconds and tokens with iat * 1000 <= tokens_valid_after are refused: the next second.
            let issuedAt = handedOver ? now / 1000 + 1 : now / 1000
            return (Grant(user: own.user, claim: fresh, isSeparateIdentity: false, issuedAt: issuedAt), own)
        }
        let id = Identifier.make(Identifier.user)
        try users.insertSeparate(id: id, handle: Self.separateHandlePrefix + id, displayName: name, claimHash: Self.hash(fresh), now: now)
        let separate = UserStatus(user: User(id: id, name: name), tokensValidAfter: 0, blockedUntil: 0)
        return (Grant(user: separate.user, claim: fresh, isSeparateIdentity: true, issuedAt: now / 1000), separate)
    }

    /// Refuses every token issued up to now to every identity shown as `name` (its own, created if need be, and the
    /// separate ones), and blocks them for `blockMilliseconds`; returns them.
    public func revokeTokens(name: String, blockMilliseconds: Int64) throws -> [User] {
        let now = Timestamp.nowMilliseconds()
        let own = try findOrCreate(name: name)
        let blockedUntil = blockMilliseconds > 0 ? now + blockMilliseconds : 0
        let revoked = try store.write {
            try $0.revoke(userID: own.id, displayName: name, tokensValidAfter: now, blockedUntil: blockedUntil)
        }
        for status in revoked { remember(status, handle: status.user.id == own.id ? name : nil) }
        return revoked.map(\.user)
    }

    /// Forgets one user's cached status (another node changed it): the next request reads the record.
    public func forget(userID: String) {
        cache.withLock { cache in
            cache.byID[userID] = nil
            cache.idByHandle = cache.idByHandle.filter { $0.value != userID }
        }
    }

    /// Empties the cache (after the data it mirrors was wiped).
    public func forgetAll() { cache.withLock { $0 = Cache() } }

    private func status(handle: String) throws -> UserStatus {
        if let cached = cache.withLock({ cache in cache.idByHandle[handle].flatMap { cache.byID[$0] } }) { return cached }
        let found = try store.write {
            try $0.findOrInsert(handle: handle, newID: Identifier.make(Identifier.user), now: Timestamp.nowMilliseconds()).status
        }
        remember(found, handle: handle)
        return found
    }

    private func remember(_ status: UserStatus, handle: String?) {
        cache.withLock { cache in
            cache.byID[status.user.id] = status
            if let handle { cache.idByHandle[handle] = status.user.id }
        }
    }

    /// 256 random bits as hex: guessing one is hopeless, so its SHA-256 is all the server needs to keep.
    private static func newClaim() -> String {
        Hex.encode(SecretFile.random())
    }

    static func hash(_ claim: String) -> String { SHA256.hexDigest(of: Array(claim.utf8)) }
}

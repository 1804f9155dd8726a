import ParlorLoop
import ParlorStore

/// Users, created on first use. A name has its own identity (handle = the name: what a token with `sub` = name and no
/// `uid` means), and may have separate identities shown with the same name (handle = U+001F + id, unreachable by any
/// name), made when someone asks POST /auth for a name in live use without its claim secret (see `authenticate`).
/// Each user has a revocation time (tokens issued up to it are refused) and a block time (nothing is issued or
/// accepted until it).
public final class UserDirectory: Sendable {
    private let database: Database
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
    private static let missingRow = StoreError(code: 1, message: "the user row is missing right after its insert")
    private static let columns = "id, name, display_name, tokens_valid_after, blocked_until"

    public init(database: Database) {
        self.database = database
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
        guard let found = try database.write({ db in
            try db.queryOne("SELECT \(Self.columns) FROM users WHERE id = ?", [.text(userID)]).map(Self.status(from:))
        }) else { return nil }
        remember(found, handle: nil)
        return found.user.name == subject ? found : nil
    }

    /// POST /auth for `name`. With the right `claim` (what an earlier grant returned for that name): the same identity.
    /// Otherwise the name's own identity, unless it is in live use (`isLive`: connected, or a member within its grace
    /// period): then a fresh, separate identity with the same name. An identity handed over without its claim gets a
    /// new claim, and every token issued for it before is refused from now on (the previous holder cannot come back
    /// with an old token). A blocked identity is refused.
    public func authenticate(name: String, claim: String?, isLive: (String) -> Bool) throws -> Grant {
        let now = Timestamp.nowMilliseconds()
        let grant = try database.write { db throws -> (Grant, UserStatus) in
            if let claim, !claim.isEmpty, claim.utf8.count <= 128,
               let row = try db.queryOne("SELECT \(Self.columns) FROM users WHERE claim_hash = ?", [.text(Self.hash(claim))]) {
                let holder = Self.status(from: row)
                if holder.user.name == name {
                    if holder.blockedUntil > now { throw Blocked(until: holder.blockedUntil) }
                    return (Grant(user: holder.user, claim: claim, isSeparateIdentity: false, issuedAt: now / 1000), holder)
                }
            }
            let fresh = Self.newClaim()
            try db.run("INSERT INTO users (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT(name) DO NOTHING",
                       [.text(Identifier.make(Identifier.user)), .text(name), .integer(now)])
            guard let row = try db.queryOne("SELECT \(Self.columns), claim_hash FROM users WHERE name = ?", [.text(name)]) else {
                throw Self.missingRow
            }
            var own = Self.status(from: row)
            if own.blockedUntil > now { throw Blocked(until: own.blockedUntil) }
            if !isLive(own.user.id) {
                // Anyone may take a name nobody is using; whoever held it before keeps nothing: their claim and tokens end.
                let handedOver = row.string("claim_hash") != nil
                if handedOver { own.tokensValidAfter = now }
                try db.run("UPDATE users SET claim_hash = ?, tokens_valid_after = ? WHERE id = ?",
                           [.text(Self.hash(fresh)), .integer(own.tokensValidAfter), .text(own.user.id)])
                // iat counts whole seconds and tokens with iat * 1000 <= tokens_valid_after are refused: the next second.
                let issuedAt = handedOver ? now / 1000 + 1 : now / 1000
                return (Grant(user: own.user, claim: fresh, isSeparateIdentity: false, issuedAt: issuedAt), own)
            }
            let id = Identifier.make(Identifier.user)
            try db.run("INSERT INTO users (id, name, display_name, claim_hash, created_at) VALUES (?, ?, ?, ?, ?)",
                       [.text(id), .text(Self.separateHandlePrefix + id), .text(name), .text(Self.hash(fresh)), .integer(now)])
            let separate = UserStatus(user: User(id: id, name: name), tokensValidAfter: 0, blockedUntil: 0)
            return (Grant(user: separate.user, claim: fresh, isSeparateIdentity: true, issuedAt: now / 1000), separate)
        }
        remember(grant.1, handle: grant.0.isSeparateIdentity ? nil : name)
        return grant.0
    }

    /// Refuses every token issued up to now to every identity shown as `name` (its own, created if need be, and the
    /// separate ones), and blocks them for `blockMilliseconds`; returns them.
    public func revokeTokens(name: String, blockMilliseconds: Int64) throws -> [User] {
        let now = Timestamp.nowMilliseconds()
        let own = try findOrCreate(name: name)
        let blockedUntil = blockMilliseconds > 0 ? now + blockMilliseconds : 0
        let revoked = try database.write { db -> [UserStatus] in
            _ = try db.run("UPDATE users SET tokens_valid_after = ?, blocked_until = ? WHERE id = ? OR display_name = ?",
                           [.integer(now), .integer(blockedUntil), .text(own.id), .text(name)])
            return try db.query("SELECT \(Self.columns) FROM users WHERE id = ? OR display_name = ?", [.text(own.id), .text(name)])
                .map(Self.status(from:))
        }
        for status in revoked { remember(status, handle: status.user.id == own.id ? name : nil) }
        return revoked.map(\.user)
    }

    /// Empties the cache (after the data it mirrors was wiped).
    public func forgetAll() { cache.withLock { $0 = Cache() } }

    private func status(handle: String) throws -> UserStatus {
        if let cached = cache.withLock({ cache in cache.idByHandle[handle].flatMap { cache.byID[$0] } }) { return cached }
        let found = try database.write { db -> UserStatus in
            try db.run("INSERT INTO users (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT(name) DO NOTHING",
                       [.text(Identifier.make(Identifier.user)), .text(handle), .integer(Timestamp.nowMilliseconds())])
            guard let row = try db.queryOne("SELECT \(Self.columns) FROM users WHERE name = ?", [.text(handle)]) else {
                throw Self.missingRow
            }
            return Self.status(from: row)
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

    private static func status(from row: Row) -> UserStatus {
        let handle = row.string("name") ?? ""
        return UserStatus(user: User(id: row.string("id") ?? "", name: row.string("display_name") ?? handle),
                          tokensValidAfter: row.int("tokens_valid_after") ?? 0, blockedUntil: row.int("blocked_until") ?? 0)
    }

    /// 256 random bits as hex: guessing one is hopeless, so its SHA-256 is all the server needs to keep.
    private static func newClaim() -> String {
        SecretFile.random().map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    static func hash(_ claim: String) -> String { SHA256.hexDigest(of: Array(claim.utf8)) }
}

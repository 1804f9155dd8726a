import ParlorLoop
import ParlorStore

/// Users by name. The same name always maps to the same user; users are created on first use.
/// Each user has a revocation time: tokens issued before it are refused.
public final class UserDirectory: Sendable {
    private let database: Database
    /// Names are immutable and users are never deleted (except by a test-mode reset), so found users are cached;
    /// the revocation time is updated here whenever it changes.
    private let cache = Locked<[String: Entry]>([:])

    private struct Entry {
        let user: User
        var tokensValidAfter: Int64
    }

    public init(database: Database) {
        self.database = database
    }

    public func findOrCreate(name: String) throws -> User {
        try entry(for: name).user
    }

    /// Unix milliseconds before which this user's tokens are refused (0: never revoked).
    public func tokensValidAfter(name: String) throws -> Int64 {
        try entry(for: name).tokensValidAfter
    }

    /// Refuses every token of `name` issued up to now; returns the user.
    public func revokeTokens(name: String) throws -> User {
        let now = Timestamp.nowMilliseconds()
        let user = try findOrCreate(name: name)
        try database.write { db in
            _ = try db.run("UPDATE users SET tokens_valid_after = ? WHERE id = ?", [.integer(now), .text(user.id)])
        }
        cache.withLock { $0[name]?.tokensValidAfter = now }
        return user
    }

    /// Empties the cache (after the data it mirrors was wiped).
    public func forgetAll() { cache.withLock { $0.removeAll() } }

    private func entry(for name: String) throws -> Entry {
        if let entry = cache.withLock({ $0[name] }) { return entry }
        let entry = try database.write { db -> Entry in
            try db.run("INSERT INTO users (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT(name) DO NOTHING",
                       [.text(Identifier.make(Identifier.user)), .text(name), .integer(Timestamp.nowMilliseconds())])
            let row = try db.queryOne("SELECT id, name, tokens_valid_after FROM users WHERE name = ?", [.text(name)])
            return Entry(user: User(id: row?.string("id") ?? "", name: row?.string("name") ?? name),
                         tokensValidAfter: row?.int("tokens_valid_after") ?? 0)
        }
        cache.withLock { $0[name] = entry }
        return entry
    }
}

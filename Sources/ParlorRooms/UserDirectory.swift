import ParlorStore
import Synchronization

/// Users by name. The same name always maps to the same user; users are created on first use.
public final class UserDirectory: Sendable {
    private let database: Database
    /// Names are immutable and users are never deleted, so a found user can be cached for good.
    private let cache = Mutex<[String: User]>([:])

    public init(database: Database) {
        self.database = database
    }

    public func findOrCreate(name: String) throws -> User {
        if let user = cache.withLock({ $0[name] }) { return user }
        let user = try database.write { db -> User in
            try db.run("INSERT INTO users (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT(name) DO NOTHING",
                       [.text(Identifier.make(Identifier.user)), .text(name), .integer(Timestamp.nowMilliseconds())])
            let row = try db.queryOne("SELECT id, name FROM users WHERE name = ?", [.text(name)])
            return User(id: row?.string("id") ?? "", name: row?.string("name") ?? name)
        }
        cache.withLock { $0[name] = user }
        return user
    }

    /// Empties the cache (after the data it mirrors was wiped).
    public func forgetAll() { cache.withLock { $0.removeAll() } }
}

import ParlorStore

/// A `UserStore` over either database: each write in the database's short write transaction
/// (`SQLDatabase.shortWrite`), all of its SQL in `SQLUserTransaction`. `Dialect` says only what differs.
public struct SQLUserStore<Dialect: SQLUserDialect>: UserStore {
    public let database: Dialect.Storage

    public init(database: Dialect.Storage) {
        self.database = database
    }

    public func write<T>(_ body: (any UserStoreTransaction) throws -> T) throws -> T {
        try database.shortWrite { connection in try body(SQLUserTransaction<Dialect>(db: connection)) }
    }
}

/// What tells the user stores' dialects apart (SQLiteUserStore, PostgresUserStore): the error of a missing row and
/// what other nodes sharing the database learn of a change. A single process has no other nodes: by default
/// nothing is told and no session is open elsewhere (`UserStoreTransaction.hasSessionOnLiveNode`).
public protocol SQLUserDialect: Sendable {
    associatedtype Storage: SQLDatabase
    /// What `findOrInsert` throws when the row it just inserted (or found taken) cannot be read back.
    static var missingRow: any Error { get }
    /// In the write transaction after user `userID`'s claim was set or its tokens revoked.
    static func changed(_ change: UserChange, userID: String, on db: Storage.Connection) throws
    static func hasSessionOnLiveNode(userID: String, on db: Storage.Connection) throws -> Bool
}

extension SQLUserDialect {
    public static func changed(_ change: UserChange, userID: String, on db: Storage.Connection) throws {}
    public static func hasSessionOnLiveNode(userID: String, on db: Storage.Connection) throws -> Bool { false }
}

/// A change to a user that other nodes' caches of it must forget (`SQLUserDialect.changed`).
public enum UserChange: Sendable {
    case claimSet, tokensRevoked
}

/// The user stores' statements, the same SQL in both dialects.
public struct SQLUserTransaction<Dialect: SQLUserDialect>: UserStoreTransaction {
    let db: Dialect.Storage.Connection

    /// The columns `Row.userStatus` reads.
    static var userColumns: String { "id, name, display_name, tokens_valid_after, blocked_until" }

    public func user(id: String) throws -> UserDirectory.UserStatus? {
        try db.queryOne("SELECT \(Self.userColumns) FROM users WHERE id = $1", [.text(id)])?.userStatus
    }

    public func user(claimHash: String) throws -> UserDirectory.UserStatus? {
        try db.queryOne("SELECT \(Self.userColumns) FROM users WHERE claim_hash = $1", [.text(claimHash)])?.userStatus
    }

    /// A concurrent insert of the same handle (another PostgreSQL connection) makes ours do nothing; the select then
    /// sees the committed row.
    public func findOrInsert(handle: String, newID: String, now: Int64) throws -> (status: UserDirectory.UserStatus, hasClaim: Bool) {
        try db.run("INSERT INTO users (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
                   [.text(newID), .text(handle), .integer(now)])
        guard let row = try db.queryOne("SELECT \(Self.userColumns), claim_hash FROM users WHERE name = $1", [.text(handle)]) else {
            throw Dialect.missingRow
        }
        return (row.userStatus, row.string("claim_hash") != nil)
    }

    public func setClaim(userID: String, claimHash: String, tokensValidAfter: Int64) throws {
        try db.run("UPDATE users SET claim_hash = $1, tokens_valid_after = $2 WHERE id = $3",
                   [.text(claimHash), .integer(tokensValidAfter), .text(userID)])
        try Dialect.changed(.claimSet, userID: userID, on: db)
    }

    /// RETURNING: PostgreSQL's, and SQLite's since 3.35.
    public func revoke(userID: String, displayName: String, tokensValidAfter: Int64, blockedUntil: Int64) throws -> [UserDirectory.UserStatus] {
        let revoked = try db.query("""
            UPDATE users SET tokens_valid_after = $1, blocked_until = $2 WHERE id = $3 OR display_name = $4
            RETURNING \(Self.userColumns)
            """, [.integer(tokensValidAfter), .integer(blockedUntil), .text(userID), .text(displayName)])
            .map(\.userStatus)
        for status in revoked { try Dialect.changed(.tokensRevoked, userID: status.user.id, on: db) }
        return revoked
    }

    public func insertSeparate(id: String, handle: String, displayName: String, claimHash: String, now: Int64) throws {
        try db.run("INSERT INTO users (id, name, display_name, claim_hash, created_at) VALUES ($1, $2, $3, $4, $5)",
                   [.text(id), .text(handle), .text(displayName), .text(claimHash), .integer(now)])
    }

    public func hasSessionOnLiveNode(userID: String) throws -> Bool {
        try Dialect.hasSessionOnLiveNode(userID: userID, on: db)
    }

    public func runsOpenRoom(userID: String) throws -> Bool {
        try db.queryOne("""
            SELECT 1 AS found FROM rooms WHERE created_by = $1 AND closed_at IS NULL
            UNION ALL
            SELECT 1 FROM room_users u JOIN rooms r ON r.id = u.room_id
            WHERE u.user_id = $1 AND u.role = 'moderator' AND r.closed_at IS NULL
            LIMIT 1
            """, [.text(userID)]) != nil
    }
}

import ParlorStore

/// A `UserStore` over either database: each write in the database's short write transaction (`SQLDatabase.shortWrite`).
public protocol SQLUserStore: UserStore {
    associatedtype Storage: SQLDatabase
    var database: Storage { get }
    func transaction(on connection: Storage.Connection) -> any UserStoreTransaction
}

extension SQLUserStore {
    public func write<T>(_ body: (any UserStoreTransaction) throws -> T) throws -> T {
        try database.shortWrite { connection in try body(transaction(on: connection)) }
    }
}

/// The user stores' statements that are the same SQL in both dialects (SQLiteUserStore, PostgresUserStore).
/// `setClaim` and `revoke` stay with each dialect: PostgreSQL tells the other nodes about them (and revokes with
/// RETURNING).
public protocol SQLUserStoreTransaction: UserStoreTransaction {
    associatedtype Connection: SQLConnection
    var db: Connection { get }
    /// What `findOrInsert` throws when the row it just inserted (or found taken) cannot be read back.
    static var missingRow: any Error { get }
}

extension SQLUserStoreTransaction {
    /// The columns `Row.userStatus` reads.
    public static var userColumns: String { "id, name, display_name, tokens_valid_after, blocked_until" }

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
            throw Self.missingRow
        }
        return (row.userStatus, row.string("claim_hash") != nil)
    }

    /// The claim's UPDATE, the same in both dialects; PostgreSQL's `setClaim` then tells the other nodes.
    public func updateClaim(userID: String, claimHash: String, tokensValidAfter: Int64) throws {
        try db.run("UPDATE users SET claim_hash = $1, tokens_valid_after = $2 WHERE id = $3",
                   [.text(claimHash), .integer(tokensValidAfter), .text(userID)])
    }

    public func insertSeparate(id: String, handle: String, displayName: String, claimHash: String, now: Int64) throws {
        try db.run("INSERT INTO users (id, name, display_name, claim_hash, created_at) VALUES ($1, $2, $3, $4, $5)",
                   [.text(id), .text(handle), .text(displayName), .text(claimHash), .integer(now)])
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

import ParlorRooms
import ParlorStore

/// `UserStore` on Parlor's SQLite database (the `users` table), through the writer connection.
public struct SQLiteUserStore: UserStore {
    private let database: Database

    public init(database: Database) {
        self.database = database
    }

    public func write<T>(_ body: (any UserStoreTransaction) throws -> T) throws -> T {
        try database.write { try body(Transaction(db: $0)) }
    }

    private struct Transaction: UserStoreTransaction {
        let db: SQLiteConnection

        static let columns = "id, name, display_name, tokens_valid_after, blocked_until"
        static let missingRow = StoreError(code: 1, message: "the user row is missing right after its insert")

        func user(id: String) throws -> UserDirectory.UserStatus? {
            try db.queryOne("SELECT \(Self.columns) FROM users WHERE id = ?", [.text(id)]).map(Self.status(from:))
        }

        func user(claimHash: String) throws -> UserDirectory.UserStatus? {
            try db.queryOne("SELECT \(Self.columns) FROM users WHERE claim_hash = ?", [.text(claimHash)]).map(Self.status(from:))
        }

        func findOrInsert(handle: String, newID: String, now: Int64) throws -> (status: UserDirectory.UserStatus, hasClaim: Bool) {
            try db.run("INSERT INTO users (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT(name) DO NOTHING",
                       [.text(newID), .text(handle), .integer(now)])
            guard let row = try db.queryOne("SELECT \(Self.columns), claim_hash FROM users WHERE name = ?", [.text(handle)]) else {
                throw Self.missingRow
            }
            return (Self.status(from: row), row.string("claim_hash") != nil)
        }

        func insertSeparate(id: String, handle: String, displayName: String, claimHash: String, now: Int64) throws {
            try db.run("INSERT INTO users (id, name, display_name, claim_hash, created_at) VALUES (?, ?, ?, ?, ?)",
                       [.text(id), .text(handle), .text(displayName), .text(claimHash), .integer(now)])
        }

        func setClaim(userID: String, claimHash: String, tokensValidAfter: Int64) throws {
            try db.run("UPDATE users SET claim_hash = ?, tokens_valid_after = ? WHERE id = ?",
                       [.text(claimHash), .integer(tokensValidAfter), .text(userID)])
        }

        func revoke(userID: String, displayName: String, tokensValidAfter: Int64, blockedUntil: Int64) throws -> [UserDirectory.UserStatus] {
            _ = try db.run("UPDATE users SET tokens_valid_after = ?, blocked_until = ? WHERE id = ? OR display_name = ?",
                           [.integer(tokensValidAfter), .integer(blockedUntil), .text(userID), .text(displayName)])
            return try db.query("SELECT \(Self.columns) FROM users WHERE id = ? OR display_name = ?", [.text(userID), .text(displayName)])
                .map(Self.status(from:))
        }

        func runsOpenRoom(userID: String) throws -> Bool {
            try db.queryOne("""
                SELECT 1 AS found FROM rooms WHERE created_by = ?1 AND closed_at IS NULL
                UNION ALL
                SELECT 1 FROM room_users u JOIN rooms r ON r.id = u.room_id
                WHERE u.user_id = ?1 AND u.role = 'moderator' AND r.closed_at IS NULL
                LIMIT 1
                """, [.text(userID)]) != nil
        }

        private static func status(from row: Row) -> UserDirectory.UserStatus {
            let handle = row.string("name") ?? ""
            return UserDirectory.UserStatus(user: User(id: row.string("id") ?? "", name: row.string("display_name") ?? handle),
                                            tokensValidAfter: row.int("tokens_valid_after") ?? 0,
                                            blockedUntil: row.int("blocked_until") ?? 0)
        }
    }
}

import ParlorPostgres
import ParlorRooms
import ParlorStore

/// `UserStore` on PostgreSQL (the `users` table), in READ COMMITTED transactions on the pool: requests on other
/// threads and other nodes may write the same users at once, and each statement sees what they committed.
public struct PostgresUserStore: UserStore {
    private let database: PostgresDatabase

    public init(database: PostgresDatabase) {
        self.database = database
    }

    public func write<T>(_ body: (any UserStoreTransaction) throws -> T) throws -> T {
        try database.writeOnPool { try body(Transaction(db: $0)) }
    }

    private struct Transaction: UserStoreTransaction {
        let db: PostgresConnection

        static let columns = "id, name, display_name, tokens_valid_after, blocked_until"

        func user(id: String) throws -> UserDirectory.UserStatus? {
            try db.queryOne("SELECT \(Self.columns) FROM users WHERE id = $1", [.text(id)]).map(Self.status(from:))
        }

        func user(claimHash: String) throws -> UserDirectory.UserStatus? {
            try db.queryOne("SELECT \(Self.columns) FROM users WHERE claim_hash = $1", [.text(claimHash)]).map(Self.status(from:))
        }

        /// A concurrent insert of the same handle makes ours do nothing; the select then sees the committed row.
        func findOrInsert(handle: String, newID: String, now: Int64) throws -> (status: UserDirectory.UserStatus, hasClaim: Bool) {
            try db.run("INSERT INTO users (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
                       [.text(newID), .text(handle), .integer(now)])
            guard let row = try db.queryOne("SELECT \(Self.columns), claim_hash FROM users WHERE name = $1", [.text(handle)]) else {
                throw PostgresError(message: "the user row is missing right after its insert")
            }
            return (Self.status(from: row), row.string("claim_hash") != nil)
        }

        func insertSeparate(id: String, handle: String, displayName: String, claimHash: String, now: Int64) throws {
            try db.run("INSERT INTO users (id, name, display_name, claim_hash, created_at) VALUES ($1, $2, $3, $4, $5)",
                       [.text(id), .text(handle), .text(displayName), .text(claimHash), .integer(now)])
        }

        func setClaim(userID: String, claimHash: String, tokensValidAfter: Int64) throws {
            try db.run("UPDATE users SET claim_hash = $1, tokens_valid_after = $2 WHERE id = $3",
                       [.text(claimHash), .integer(tokensValidAfter), .text(userID)])
            try notify(PostgresClusterLink.userPrefix, userID)
        }

        func revoke(userID: String, displayName: String, tokensValidAfter: Int64, blockedUntil: Int64) throws -> [UserDirectory.UserStatus] {
            let revoked = try db.query("""
                UPDATE users SET tokens_valid_after = $1, blocked_until = $2 WHERE id = $3 OR display_name = $4
                RETURNING \(Self.columns)
                """, [.integer(tokensValidAfter), .integer(blockedUntil), .text(userID), .text(displayName)])
                .map(Self.status(from:))
            for status in revoked { try notify(PostgresClusterLink.revokePrefix, status.user.id) }
            return revoked
        }

        /// A session whose node stopped or died does not count: a stopped node gave up its lease, a dead one's
        /// sessions end with its takeover.
        func hasSessionOnLiveNode(userID: String) throws -> Bool {
            try db.queryOne("""
                SELECT 1 AS found FROM sessions s JOIN nodes n ON n.id = s.node_id
                WHERE s.user_id = $1 AND s.ended_at IS NULL AND n.lease_until >= \(PostgresRoomTransaction.databaseNow) LIMIT 1
                """, [.text(userID)]) != nil
        }

        func runsOpenRoom(userID: String) throws -> Bool {
            try db.queryOne("""
                SELECT 1 AS found FROM rooms WHERE created_by = $1 AND closed_at IS NULL
                UNION ALL
                SELECT 1 FROM room_users u JOIN rooms r ON r.id = u.room_id
                WHERE u.user_id = $1 AND u.role = 'moderator' AND r.closed_at IS NULL
                LIMIT 1
                """, [.text(userID)]) != nil
        }

        /// Other nodes forget what they cached about the user once this commits (PostgresClusterLink).
        private func notify(_ prefix: String, _ userID: String) throws {
            try db.run("SELECT pg_notify('\(PostgresClusterLink.channel)', $1::text)", [.text(prefix + userID)])
        }

        private static func status(from row: Row) -> UserDirectory.UserStatus {
            let handle = row.string("name") ?? ""
            return UserDirectory.UserStatus(user: User(id: row.string("id") ?? "", name: row.string("display_name") ?? handle),
                                            tokensValidAfter: row.int("tokens_valid_after") ?? 0,
                                            blockedUntil: row.int("blocked_until") ?? 0)
        }
    }
}

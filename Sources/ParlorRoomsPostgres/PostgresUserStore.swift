import ParlorPostgres
import ParlorRooms
import ParlorStore

/// `UserStore` on PostgreSQL (the `users` table), in READ COMMITTED transactions on the pool: requests on other
/// threads and other nodes may write the same users at once, and each statement sees what they committed. The
/// statements both dialects share are ParlorRooms' (`SQLUserStoreTransaction`).
public struct PostgresUserStore: SQLUserStore {
    public let database: PostgresDatabase

    public init(database: PostgresDatabase) {
        self.database = database
    }

    public func transaction(on connection: PostgresConnection) -> any UserStoreTransaction { Transaction(db: connection) }

    private struct Transaction: SQLUserStoreTransaction {
        let db: PostgresConnection

        static var missingRow: any Error { PostgresError(message: "the user row is missing right after its insert") }

        func setClaim(userID: String, claimHash: String, tokensValidAfter: Int64) throws {
            try updateClaim(userID: userID, claimHash: claimHash, tokensValidAfter: tokensValidAfter)
            try notify(PostgresClusterLink.userPrefix, userID)
        }

        func revoke(userID: String, displayName: String, tokensValidAfter: Int64, blockedUntil: Int64) throws -> [UserDirectory.UserStatus] {
            let revoked = try db.query("""
                UPDATE users SET tokens_valid_after = $1, blocked_until = $2 WHERE id = $3 OR display_name = $4
                RETURNING \(Self.userColumns)
                """, [.integer(tokensValidAfter), .integer(blockedUntil), .text(userID), .text(displayName)])
                .map(\.userStatus)
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

        /// Other nodes forget what they cached about the user once this commits (PostgresClusterLink).
        private func notify(_ prefix: String, _ userID: String) throws {
            try db.run("SELECT pg_notify('\(PostgresClusterLink.channel)', $1::text)", [.text(prefix + userID)])
        }
    }
}

import ParlorPostgres
import ParlorRooms
import ParlorStore

/// `UserStore` on PostgreSQL (the `users` table), in READ COMMITTED transactions on the pool: requests on other
/// threads and other nodes may write the same users at once, and each statement sees what they committed. Its SQL
/// is ParlorRooms' (`SQLUserTransaction`) but for what concerns the other nodes (`PostgresUsers`).
public typealias PostgresUserStore = SQLUserStore<PostgresUsers>

/// PostgreSQL's part of the user store: other nodes share the database, so they learn of changes to a user and
/// their sessions count.
public enum PostgresUsers: SQLUserDialect {
    public typealias Storage = PostgresDatabase

    public static var missingRow: any Error { PostgresError(message: "the user row is missing right after its insert") }

    /// Other nodes forget what they cached about the user once this commits (PostgresClusterLink).
    public static func changed(_ change: UserChange, userID: String, on db: PostgresConnection) throws {
        let prefix = switch change {
        case .claimSet: PostgresClusterLink.userPrefix
        case .tokensRevoked: PostgresClusterLink.revokePrefix
        }
        try db.run("SELECT pg_notify('\(PostgresClusterLink.channel)', $1::text)", [.text(prefix + userID)])
    }

    /// A session whose node stopped or died does not count: a stopped node gave up its lease, a dead one's
    /// sessions end with its takeover.
    public static func hasSessionOnLiveNode(userID: String, on db: PostgresConnection) throws -> Bool {
        try db.queryOne("""
            SELECT 1 AS found FROM sessions s JOIN nodes n ON n.id = s.node_id
            WHERE s.user_id = $1 AND s.ended_at IS NULL AND n.lease_until >= \(PostgresRoomTransaction.databaseNow) LIMIT 1
            """, [.text(userID)]) != nil
    }
}

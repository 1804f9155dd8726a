import ParlorRooms
import ParlorStore

/// `UserStore` on Parlor's SQLite database (the `users` table), through the writer connection. The statements both
/// dialects share are ParlorRooms' (`SQLUserStoreTransaction`).
public struct SQLiteUserStore: SQLUserStore {
    public let database: Database

    public init(database: Database) {
        self.database = database
    }

    public func transaction(on connection: SQLiteConnection) -> any UserStoreTransaction { Transaction(db: connection) }

    private struct Transaction: SQLUserStoreTransaction {
        let db: SQLiteConnection

        static var missingRow: any Error { StoreError(code: 1, message: "the user row is missing right after its insert") }

        func setClaim(userID: String, claimHash: String, tokensValidAfter: Int64) throws {
            try updateClaim(userID: userID, claimHash: claimHash, tokensValidAfter: tokensValidAfter)
        }

        func revoke(userID: String, displayName: String, tokensValidAfter: Int64, blockedUntil: Int64) throws -> [UserDirectory.UserStatus] {
            _ = try db.run("UPDATE users SET tokens_valid_after = ?, blocked_until = ? WHERE id = ? OR display_name = ?",
                           [.integer(tokensValidAfter), .integer(blockedUntil), .text(userID), .text(displayName)])
            return try db.query("SELECT \(Self.userColumns) FROM users WHERE id = ? OR display_name = ?", [.text(userID), .text(displayName)])
                .map(\.userStatus)
        }
    }
}

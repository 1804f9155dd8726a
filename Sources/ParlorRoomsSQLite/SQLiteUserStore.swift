import ParlorRooms
import ParlorStore

/// `UserStore` on Parlor's SQLite database (the `users` table), through the writer connection. All its SQL is
/// ParlorRooms' (`SQLUserTransaction`).
public typealias SQLiteUserStore = SQLUserStore<SQLiteUsers>

/// SQLite's part of the user store: its error for a missing row. One process uses the file, so no other node is told
/// of a change.
public enum SQLiteUsers: SQLUserDialect {
    public typealias Storage = Database

    public static var missingRow: any Error { StoreError(code: 1, message: "the user row is missing right after its insert") }
}

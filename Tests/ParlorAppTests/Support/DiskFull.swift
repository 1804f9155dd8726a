import ParlorApp
import ParlorStore

/// A full disk, as the server's writer connection sees it: every write to the tables Parlor changes fails with
/// SQLITE_FULL (each also has to store a 1 MiB blob in a temporary table capped by `PRAGMA max_page_count`),
/// while reads keep working. `free` gives the space back. Only the writer connection is affected.
enum DiskFull {
    private static let writes = [
        ("sessions", "INSERT"), ("sessions", "UPDATE"), ("members", "INSERT"), ("members", "UPDATE"),
        ("events", "INSERT"), ("rooms", "INSERT"), ("rooms", "UPDATE"), ("schema_migrations", "UPDATE"),
    ]

    static func fill(_ app: ParlorApplication) throws {
        var script = "CREATE TEMP TABLE IF NOT EXISTS ballast (filler BLOB); PRAGMA temp.max_page_count = 16;"
        for (table, operation) in writes {
            script += """
                CREATE TEMP TRIGGER IF NOT EXISTS full_\(table)_\(operation.lowercased()) BEFORE \(operation) ON main.\(table)
                BEGIN INSERT INTO ballast VALUES (zeroblob(1048576)); END;
                """
        }
        try app.database.write { try $0.execute(script) }
    }

    static func free(_ app: ParlorApplication) throws {
        let script = writes.map { "DROP TRIGGER IF EXISTS temp.full_\($0.0)_\($0.1.lowercased());" }.joined()
        try app.database.write { try $0.execute(script) }
    }
}

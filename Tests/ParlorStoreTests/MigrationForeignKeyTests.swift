import Foundation
import Testing
import ParlorStore

/// Each migration step ends with `PRAGMA foreign_key_check`: a step that orphans rows is rolled back.
@Suite struct MigrationForeignKeyTests {
    private let embeddedIDs = Migrations.embedded.map(\.id)
    private let families = Migration(id: "900_families", sql: """
        CREATE TABLE parents (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
        CREATE TABLE kids (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL REFERENCES parents(id));
        INSERT INTO parents VALUES (1, 'a'), (2, 'b');
        INSERT INTO kids VALUES (10, 1), (20, 2);
        """)

    /// SQLite's table rebuild (new table, copy, drop, rename), keeping rows whose id passes `filter`.
    private func rebuildParents(_ id: String, keeping filter: String) -> Migration {
        Migration(id: id, sql: """
            CREATE TABLE parents_new (id INTEGER PRIMARY KEY, name TEXT NOT NULL, nickname TEXT);
            INSERT INTO parents_new (id, name) SELECT id, name FROM parents WHERE \(filter);
            DROP TABLE parents;
            ALTER TABLE parents_new RENAME TO parents;
            """)
    }

    @Test func aStepThatOrphansRowsFailsAndRollsBack() throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/parlor.db"
            try Database(DatabaseConfiguration(path: path, migrations: Migrations.embedded + [families])).close()

            let breaking = rebuildParents("901_parents_rebuilt", keeping: "id <> 2")
            let error = #expect(throws: MigrationError.self) {
                try Database(DatabaseConfiguration(path: path, migrations: Migrations.embedded + [families, breaking]))
            }
            guard case .foreignKeyViolation(let id, let violations) = error else {
                Issue.record("expected .foreignKeyViolation, got \(String(describing: error))")
                return
            }
            #expect(id == "901_parents_rebuilt")
            #expect(violations == ["kids row 20 → parents"])
            #expect(error?.description.contains("broke foreign keys and was rolled back") == true)

            // Nothing of the step remains: the old table with both rows, no record of the step.
            let database = try Database(DatabaseConfiguration(path: path, migrations: Migrations.embedded + [families]))
            defer { database.close() }
            #expect(try database.migrationStatus().map(\.id) == embeddedIDs + ["900_families"])
            #expect(try database.read { try $0.query("SELECT id FROM parents ORDER BY id").compactMap { $0.int("id") } } == [1, 2])
            #expect(try !database.read { try $0.tableExists("parents_new") })
        }
    }

    @Test func aTableRebuildThatKeepsEveryParentIsApplied() throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/parlor.db"
            let rebuild = rebuildParents("901_parents_rebuilt", keeping: "1")
            let database = try Database(DatabaseConfiguration(path: path, migrations: Migrations.embedded + [families, rebuild]))
            defer { database.close() }
            #expect(try database.migrationStatus().map(\.id) == embeddedIDs + ["900_families", "901_parents_rebuilt"])
            #expect(try database.read { try $0.tableExists("parents") && !$0.tableExists("parents_new") })

            // Foreign keys are enforced again once the migrations are done.
            #expect(throws: StoreError.self) {
                try database.write { try $0.run("INSERT INTO kids VALUES (30, 99)") }
            }
        }
    }
}

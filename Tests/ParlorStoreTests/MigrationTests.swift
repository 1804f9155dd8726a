import Foundation
import Synchronization
import Testing
import ParlorStore

@Suite struct MigrationTests {
    // Numbered after any real migration, so these tests hold whatever the embedded list holds.
    private let widgets = Migration(id: "900_widgets", sql: "CREATE TABLE widgets (id INTEGER PRIMARY KEY);")
    private let embeddedIDs = Migrations.embedded.map(\.id)

    @Test(arguments: StoreKind.allCases)
    func freshDatabaseAppliesAndRecordsInitialMigration(kind: StoreKind) throws {
        try withDatabase(kind) { database in
            let status = try database.migrationStatus()
            #expect(status.map(\.id) == embeddedIDs)
            #expect(status.first?.id == "001_initial")
            #expect(status.first?.checksum == Migrations.embedded.first?.checksum)
            #expect((status.first?.appliedAt ?? 0) > 1_600_000_000_000, "applied_at is Unix milliseconds")
            #expect(try database.read { try $0.tableExists("rooms") })
        }
    }

    @Test func reopeningIsANoOp() throws {
        try withTemporaryDirectory { directory in
            let configuration = DatabaseConfiguration(path: "\(directory)/parlor.db")
            let first = try Database(configuration)
            try first.write { try $0.insertUser("USR-1") }
            let before = try first.migrationStatus()
            first.close()

            let second = try Database(configuration)
            defer { second.close() }
            let after = try second.migrationStatus()
            #expect(after.map(\.id) == before.map(\.id))
            #expect(after.map(\.appliedAt) == before.map(\.appliedAt))
            #expect(after.map(\.checksum) == before.map(\.checksum))
            #expect(try second.read { try $0.count("users") } == 1, "data survives the reopen")
        }
    }

    @Test func changedMigrationIsRefused() throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/parlor.db"
            try Database(DatabaseConfiguration(path: path)).close()

            let initial = try #require(Migrations.embedded.first)
            let edited = Migration(id: initial.id, sql: initial.sql + "\nCREATE TABLE sneaky (id INTEGER);\n")
            let error = #expect(throws: MigrationError.self) {
                try Database(DatabaseConfiguration(path: path, migrations: [edited] + Migrations.embedded.dropFirst()))
            }
            guard case .changed(let id) = error else {
                Issue.record("expected .changed, got \(String(describing: error))")
                return
            }
            #expect(id == "001_initial")
            #expect(error?.description.contains("migrations are immutable") == true)
        }
    }

    @Test func newMigrationIsAppliedOnReopen() throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/parlor.db"
            try Database(DatabaseConfiguration(path: path)).close()

            let database = try Database(DatabaseConfiguration(path: path, migrations: Migrations.embedded + [widgets]))
            defer { database.close() }
            #expect(try database.migrationStatus().map(\.id) == embeddedIDs + ["900_widgets"])
            #expect(try database.read { try $0.tableExists("widgets") })
        }
    }

    @Test func pendingMigrationsAreReportedBeforeAndAfterTheyRun() throws {
        // What `reportMigrations` was told, in order (it runs on the opening thread, but must be Sendable).
        let reports = Mutex<[MigrationProgress]>([])
        func open(_ path: String, _ migrations: [Migration]) throws {
            var configuration = DatabaseConfiguration(path: path, migrations: migrations)
            configuration.reportMigrations = { progress in reports.withLock { $0.append(progress) } }
            try Database(configuration).close()
        }
        func take() -> [MigrationProgress] { reports.withLock { items in defer { items = [] }; return items } }
        func ids(_ progress: [MigrationProgress]) -> [String] {
            progress.map {
                switch $0 {
                case .applying(let ids): "applying \(ids.joined(separator: " "))"
                case .applied(let ids, let seconds): "applied \(ids.joined(separator: " "))\(seconds >= 0 ? "" : " in negative time")"
                }
            }
        }
        try withTemporaryDirectory { directory in
            let path = "\(directory)/parlor.db"
            try open(path, Migrations.embedded)
            let all = embeddedIDs.joined(separator: " ")
            #expect(ids(take()) == ["applying \(all)", "applied \(all)"])
            try open(path, Migrations.embedded + [widgets])
            #expect(ids(take()) == ["applying 900_widgets", "applied 900_widgets"])
            try open(path, Migrations.embedded + [widgets])
            #expect(take().isEmpty, "nothing pending, nothing said")
        }
    }

    @Test func failingMigrationRollsBack() throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/parlor.db"
            let broken = Migration(
                id: "900_broken", sql: "CREATE TABLE half_done (id INTEGER); INSERT INTO no_such_table VALUES (1);")

            let error = #expect(throws: MigrationError.self) {
                try Database(DatabaseConfiguration(path: path, migrations: Migrations.embedded + [broken]))
            }
            guard case .failed(let id, let underlying) = error else {
                Issue.record("expected .failed, got \(String(describing: error))")
                return
            }
            #expect(id == "900_broken")
            #expect(underlying.message.contains("no_such_table"))

            // The earlier migration stays applied; the broken one left nothing behind.
            let database = try Database(DatabaseConfiguration(path: path))
            defer { database.close() }
            #expect(try database.migrationStatus().map(\.id) == embeddedIDs)
            #expect(try !database.read { try $0.tableExists("half_done") })
        }
    }

    @Test func migrationsUnknownToTheBinaryAreRefused() throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/parlor.db"
            try Database(DatabaseConfiguration(path: path, migrations: Migrations.embedded + [widgets])).close()

            let error = #expect(throws: MigrationError.self) {
                try Database(DatabaseConfiguration(path: path))
            }
            guard case .unknown(let ids) = error else {
                Issue.record("expected .unknown, got \(String(describing: error))")
                return
            }
            #expect(ids == ["900_widgets"])
        }
    }

    @Test func migrationsRunInIdOrderWhateverTheListOrder() throws {
        let addColumn = Migration(id: "901_widget_name", sql: "ALTER TABLE widgets ADD COLUMN name TEXT;")
        try withDatabase(.memory, migrations: [addColumn, widgets] + Migrations.embedded) { database throws in
            #expect(try database.migrationStatus().map(\.id) == embeddedIDs + ["900_widgets", "901_widget_name"])
        }
    }

    @Test func duplicateIdsAreRefused() throws {
        #expect(throws: MigrationError.self) {
            try Database(DatabaseConfiguration(path: ":memory:", migrations: [widgets, widgets]))
        }
    }

    @Test func embeddedMigrationsMatchTheFiles() throws {
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // ParlorStoreTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()
        let file = packageRoot.appending(path: "Migrations/001_initial.sql")
        let sql = try String(contentsOf: file, encoding: .utf8)

        let embedded = try #require(Migrations.embedded.first { $0.id == "001_initial" })
        #expect(embedded.sql == sql)
        #expect(Migrations.embedded.map(\.id) == Migrations.embedded.map(\.id).sorted())
    }

    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
    ])
    func checksumIsSHA256(sql: String, expected: String) {
        #expect(Migration(id: "x", sql: sql).checksum == expected)
    }
}

import Foundation
import ParlorPostgres
import ParlorStore
import PostgresTestCluster
import Synchronization
import Testing

/// Migrations in PostgreSQL: recorded with checksums, refused when changed or unknown, and applied once when
/// several nodes start at the same time.
@Suite struct PostgresMigrationTests {
    @Test func anEmptyDatabaseGetsTheEmbeddedSchemaAndASecondOpenAppliesNothing() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let first = try PostgresDatabase(url: url, poolSize: 1)
        #expect(first.appliedMigrations == PostgresMigrations.embedded.map(\.id))
        #expect(try first.migrationStatus().map(\.checksum) == PostgresMigrations.embedded.map(\.checksum))
        first.close()
        let second = try PostgresDatabase(url: url, poolSize: 1)
        defer { second.close() }
        #expect(second.appliedMigrations.isEmpty)
    }

    @Test func pendingMigrationsAreReportedBeforeAndAfterTheyRun() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let reports = Mutex<[String]>([])
        let report: @Sendable (MigrationProgress) -> Void = { progress in
            let line = switch progress {
            case .applying(let ids): "applying \(ids.joined(separator: " "))"
            case .applied(let ids, let seconds): "applied \(ids.joined(separator: " "))\(seconds >= 0 ? "" : " in negative time")"
            }
            reports.withLock { $0.append(line) }
        }
        try PostgresDatabase(url: url, poolSize: 1, reportMigrations: report).close()
        let all = PostgresMigrations.embedded.map(\.id).joined(separator: " ")
        #expect(reports.withLock { $0 } == ["applying \(all)", "applied \(all)"])
        try PostgresDatabase(url: url, poolSize: 1, reportMigrations: report).close()
        #expect(reports.withLock { $0.count } == 2, "nothing pending, nothing said")
    }

    @Test func twoNodesStartingAtOnceMigrateOnce() throws {
        let url = try TestPostgres.shared().makeDatabase()
        // Hold the migration lock so both migrators are provably waiting on it together, then let them go.
        let holder = try PostgresConnection(url: url)
        try holder.execute("SELECT pg_advisory_lock(\(0x7061_726C_6F72))")
        let results = Mutex<[Result<[String], any Error>]>([])
        let done = DispatchGroup()
        for _ in 0..<2 {
            done.enter()
            Thread.detachNewThread {
                let result = Result { () throws -> [String] in
                    let database = try PostgresDatabase(url: url, poolSize: 1)
                    defer { database.close() }
                    return database.appliedMigrations
                }
                results.withLock { $0.append(result) }
                done.leave()
            }
        }
        try waitUntil { try holder.queryOne("SELECT COUNT(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")?.int("n") == 2 }
        try holder.execute("SELECT pg_advisory_unlock(\(0x7061_726C_6F72))")
        done.wait()

        let applied = try results.withLock { try $0.map { try $0.get() } }
        #expect(applied.map(\.count).sorted() == [0, PostgresMigrations.embedded.count])
        let recorded = try #require(try holder.queryOne("SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS ids FROM schema_migrations"))
        #expect(recorded.int("n") == Int64(PostgresMigrations.embedded.count) && recorded.int("ids") == recorded.int("n"))
    }

    @Test func aChangedOrUnknownMigrationStopsTheStartBeforeAnyChange() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let base = [Migration(id: "001_a", sql: "CREATE TABLE a (id INTEGER)")]
        try PostgresDatabase(url: url, poolSize: 1, migrations: base).close()

        let changed = [Migration(id: "001_a", sql: "CREATE TABLE a (id BIGINT)"), Migration(id: "002_b", sql: "CREATE TABLE b (id INTEGER)")]
        #expect { try PostgresDatabase(url: url, poolSize: 1, migrations: changed) } throws: { error in
            if case MigrationError.changed(id: "001_a") = error { true } else { false }
        }
        #expect { try PostgresDatabase(url: url, poolSize: 1, migrations: []) } throws: { error in
            if case MigrationError.unknown(ids: ["001_a"]) = error { true } else { false }
        }
        let check = try PostgresConnection(url: url)
        #expect(try check.queryOne("SELECT to_regclass('b') IS NULL AS missing")?.bool("missing") == true)
    }

    @Test func aFailingMigrationIsRolledBackAndNotRecorded() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let broken = [Migration(id: "001_broken", sql: "CREATE TABLE c (id INTEGER); SELECT no_such_column FROM c;")]
        let error = try #require(throws: PostgresError.self) { try PostgresDatabase(url: url, poolSize: 1, migrations: broken) }
        #expect(error.message.contains("001_broken"))
        let check = try PostgresConnection(url: url)
        #expect(try check.queryOne("SELECT to_regclass('c') IS NULL AS missing")?.bool("missing") == true)
        #expect(try check.queryOne("SELECT COUNT(*) AS n FROM schema_migrations")?.int("n") == 0)
    }

    @Test func aSharedSecretIsGeneratedOnceAndThenReadByEveryNode() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let first = try PostgresDatabase(url: url, poolSize: 1)
        defer { first.close() }
        let second = try PostgresDatabase(url: url, poolSize: 1)
        defer { second.close() }
        let secret = try first.sharedSecret(named: "jwt") { Array(repeating: 1, count: 32) }
        #expect(secret == Array(repeating: 1, count: 32))
        #expect(try second.sharedSecret(named: "jwt") { Array(repeating: 2, count: 32) } == secret)
        #expect(try second.sharedSecret(named: "webhook") { Array(repeating: 3, count: 32) } != secret)
    }

    /// Polls a condition the database reports (no event to wait on); fails after about ten seconds.
    private func waitUntil(_ condition: () throws -> Bool) throws {
        for _ in 0..<10_000 {
            if try condition() { return }
            usleep(1000)
        }
        Issue.record("the condition did not hold")
    }
}

import ParlorPostgres
import ParlorStore
import PostgresTestCluster
import Testing

/// The libpq layer against the test run's own PostgreSQL: URLs, typed parameters and results, errors.
@Suite struct ConnectionTests {
    @Test func urlsAreCheckedByLibpqAndLoggedWithoutTheirPassword() throws {
        #expect(PostgresURL.isPostgres("postgresql://h/db") && PostgresURL.isPostgres("postgres://h/db"))
        #expect(!PostgresURL.isPostgres("./data/parlor.db"))
        let url = try PostgresURL("postgres://parlor:s3cret@db.example:5432/parlor?sslmode=require&password=other")
        #expect(!url.description.contains("s3cret") && !url.description.contains("other"))
        #expect(url.description.hasPrefix("postgres://parlor:***@db.example:5432/parlor?sslmode=require"))
        #expect(throws: PostgresError.self) { try PostgresURL("postgres://h/db?nosuchparameter=1") }
        #expect(throws: PostgresError.self) { try PostgresURL("mysql://h/db") }
    }

    @Test func parametersAndResultsKeepTheirTypes() throws {
        let connection = try PostgresConnection(url: try TestPostgres.shared().makeDatabase())
        let row = try #require(try connection.queryOne("""
            SELECT $1::bigint AS n, $2::text AS t, $3::text AS missing, $4::boolean AS yes, $5::bytea AS bytes,
                   $6::double precision AS x, COUNT(*) AS c FROM (VALUES (1), (2)) v
            """, [.integer(-9_007_199_254_740_993), .text("ünï'\"cøde"), .null, .text("true"), .blob([0, 1, 255]), .real(2.5)]))
        #expect(row["n"] == .integer(-9_007_199_254_740_993))
        #expect(row["t"] == .text("ünï'\"cøde"))
        #expect(row["missing"] == .null)
        #expect(row.bool("yes") == true)
        #expect(row["bytes"] == .blob([0, 1, 255]))
        #expect(row["x"] == .real(2.5))
        #expect(row["c"] == .integer(2))
    }

    @Test func aDuplicateIsAConstraintViolationNotAStorageFailure() throws {
        let connection = try PostgresConnection(url: try TestPostgres.shared().makeDatabase())
        try connection.execute("CREATE TABLE t (id TEXT PRIMARY KEY)")
        try connection.run("INSERT INTO t (id) VALUES ($1)", [.text("a")])
        let error = try #require(throws: PostgresError.self) { try connection.run("INSERT INTO t (id) VALUES ($1)", [.text("a")]) }
        #expect(error.isUniqueViolation && error.isConstraintViolation)
        #expect(!error.isStorageFailure && !error.connectionLost)
        #expect(error.sqlState == "23505")
    }

    @Test func aStatementThatFailsAbortsTheTransactionWhichThenRefusesToCommit() throws {
        let connection = try PostgresConnection(url: try TestPostgres.shared().makeDatabase())
        try connection.execute("CREATE TABLE t (id TEXT PRIMARY KEY)")
        #expect(throws: PostgresError.self) {
            try connection.inTransaction { db in
                try db.run("INSERT INTO t (id) VALUES ('a')")
                _ = try? db.run("INSERT INTO t (id) VALUES ('a')")  // swallowed: the transaction is aborted anyway
            }
        }
        #expect(!connection.isInTransaction)
        #expect(try connection.queryOne("SELECT COUNT(*) AS n FROM t")?.int("n") == 0)
    }

    @Test func aLostConnectionSaysSoAndTheNextTransactionReconnects() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let connection = try PostgresConnection(url: url)
        let pid = try #require(try connection.queryOne("SELECT pg_backend_pid() AS pid")?.int("pid"))
        let other = try PostgresConnection(url: url)
        #expect(try other.queryOne("SELECT pg_terminate_backend($1) AS done", [.integer(pid)])?.bool("done") == true)

        let error = try #require(throws: PostgresError.self) { try connection.queryOne("SELECT 1 AS one") }
        #expect(error.connectionLost && error.isStorageFailure)
        #expect(!connection.isConnected)
        let one = try connection.inTransaction { try $0.queryOne("SELECT 1 AS one")?.int("one") }
        #expect(one == 1)
        #expect(try connection.queryOne("SELECT pg_backend_pid() AS pid")?.int("pid") != pid)
    }

    @Test func anUnreachableServerIsAConnectionFailure() throws {
        let cluster = try TestPostgres.shared()
        let error = try #require(throws: PostgresError.self) {
            _ = try PostgresConnection(url: try cluster.url(database: "no_such_database"))
        }
        #expect(error.connectionLost && error.message.contains("no_such_database"))
    }
}

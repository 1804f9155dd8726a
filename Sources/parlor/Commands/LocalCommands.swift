import Foundation
import ParlorApp
import ParlorPostgres
import ParlorRooms
import ParlorStore

/// Subcommands that work on the configuration and database directly, with no server running: token, migrate.
enum LocalCommands {
    static let tokenHelp = """
        Usage: parlor token --name NAME [--ttl SECONDS] [--jwt-secret SECRET | --data-dir DIR | --dev] [--json]
        Mints a token offline with the server's secret: PARLOR_JWT_SECRET (or --jwt-secret), else the secret the server
        generated in DIR/jwt-secret (--data-dir or PARLOR_DATA_DIR, default ./data). An app's own backend can mint the
        same tokens: HS256 over {"sub": NAME, "iat", "nbf", "exp", "jti"} with that secret (at least 16 bytes, as the
        server requires). --dev uses the fixed secret of `parlor serve --dev`.
        """
    static let migrateHelp = """
        Usage: parlor migrate [--status] [--database PATH|postgres://… | --data-dir DIR] [--json]
        Applies the pending migrations to the database (the server also does at start), or with --status lists
        which are applied and which are pending without changing anything. On PostgreSQL, nodes that migrate at the
        same time wait for each other (an advisory lock): the migrations run once.
        """

    static func token(_ arguments: [String]) throws -> Int32 {
        let options = try CommandLineOptions(arguments, valued: ["--name", "--ttl", "--jwt-secret", "--data-dir"], switches: ["--json", "--dev"])
        guard let rawName = options["--name"], !rawName.isEmpty else { throw UsageError(description: "token needs --name") }
        let rules = TextRules.userName
        // The server refuses a token whose sub breaks the name rules: refuse to mint it.
        let name: String
        switch TextRules.check(rawName, minCharacters: rules.minCharacters, maxCharacters: rules.maxCharacters, maxBytes: rules.maxBytes) {
        case .success(let valid): name = valid
        case .failure(let violation): throw UsageError(description: "--name \(violation.rule)")
        }
        var ttl: Int64?
        if let text = options["--ttl"] {
            guard let seconds = Int64(text), (1...TokenService.maxTimeToLive).contains(seconds) else {
                throw UsageError(description: "--ttl must be a whole number of seconds from 1 to \(TokenService.maxTimeToLive) (ten years), not \(text)")
            }
            ttl = seconds
        }
        let environment = ProcessInfo.processInfo.environment
        let secret: [UInt8]
        if let configured = options.has("--dev") ? AppConfiguration.devJWTSecret : options["--jwt-secret"] ?? environment["PARLOR_JWT_SECRET"] {
            do {
                try AppConfiguration.validateSecret(configured, options["--jwt-secret"] != nil ? "--jwt-secret" : "PARLOR_JWT_SECRET")
            } catch {
                throw UsageError(description: error.message)
            }
            secret = Array(configured.utf8)
        } else {
            let directory = options["--data-dir"] ?? environment["PARLOR_DATA_DIR"] ?? "./data"
            guard FileManager.default.fileExists(atPath: directory + "/" + SecretFile.fileName) else {
                warn("no secret: set PARLOR_JWT_SECRET or point --data-dir at a server's data directory (\(directory) has no \(SecretFile.fileName))")
                return ExitCode.notFound
            }
            secret = try SecretFile.loadOrCreate(in: directory)
        }
        let service = TokenService(secret: secret, timeToLiveSeconds: Int64(environment["PARLOR_TOKEN_TTL"] ?? "") ?? 6 * 3600)
        let issued = try service.issue(name: name, ttl: ttl)
        if options.has("--json") {
            print(#"{"name":\#(jsonString(name)),"jwt":"\#(issued.token)","expires_at":"\#(Timestamp.iso8601(milliseconds: issued.claims.expiresAt * 1000))"}"#)
        } else {
            print(issued.token)
        }
        return ExitCode.success
    }

    /// `parlor migrate` names the migrations it is about to apply on stderr (a rebuild can take seconds).
    private static let namePendingMigrations: @Sendable (MigrationProgress) -> Void = { progress in
        if case .applying(let ids) = progress { warn("applying \(ids.joined(separator: ", "))") }
    }

    static func migrate(_ arguments: [String]) throws -> Int32 {
        let options = try CommandLineOptions(arguments, valued: ["--database", "--data-dir"], switches: ["--status", "--json"])
        let environment = ProcessInfo.processInfo.environment
        let directory = options["--data-dir"] ?? environment["PARLOR_DATA_DIR"] ?? "./data"
        let path = options["--database"] ?? environment["PARLOR_DATABASE"] ?? directory + "/parlor.db"
        guard path != ":memory:" else { throw UsageError(description: "an in-memory database has nothing to migrate") }
        let statusOnly = options.has("--status")
        let applied: [(id: String, appliedAt: Int64, checksum: String)]
        let known: [Migration]
        var shownPath = path
        if PostgresURL.isPostgres(path) {
            let url = try PostgresURL(path)
            shownPath = url.description
            let database = try PostgresDatabase(url: url, poolSize: 1, appliesMigrations: !statusOnly,
                                                reportMigrations: Self.namePendingMigrations)
            defer { database.close() }
            applied = try database.migrationStatus()
            known = PostgresMigrations.embedded
        } else {
            if statusOnly, !FileManager.default.fileExists(atPath: path) {
                warn("no database at \(path)")
                return ExitCode.notFound
            }
            var configuration = DatabaseConfiguration(path: path, readerCount: 1)
            configuration.appliesMigrations = !statusOnly
            configuration.reportMigrations = Self.namePendingMigrations
            let database = try Database(configuration)
            defer { database.close() }
            applied = try database.migrationStatus()
            known = Migrations.embedded
        }
        let appliedIDs = Set(applied.map(\.id))
        let pending = known.filter { !appliedIDs.contains($0.id) }
        if options.has("--json") {
            let appliedJSON = applied.map { #"{"id":"\#($0.id)","applied_at":"\#(Timestamp.iso8601(milliseconds: $0.appliedAt))"}"# }
            let pendingJSON = pending.map { #""\#($0.id)""# }
            print(#"{"database":\#(jsonString(shownPath)),"applied":[\#(appliedJSON.joined(separator: ","))],"pending":[\#(pendingJSON.joined(separator: ","))]}"#)
        } else {
            TableOutput.print(["MIGRATION", "STATE", "APPLIED AT"],
                              applied.map { [$0.id, "applied", Timestamp.iso8601(milliseconds: $0.appliedAt)] } + pending.map { [$0.id, "pending", ""] })
        }
        return ExitCode.success
    }

    /// `text` as a JSON string literal, quotes and escapes included (names and paths may hold `"` or `\`).
    private static func jsonString(_ text: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        return (try? encoder.encode(text)).map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
    }
}

import ParlorPostgres

extension AppConfiguration {
    /// The PostgreSQL database `--database` names (`postgres://` or `postgresql://`, any libpq parameters), or
    /// nil for SQLite; throws when the URL is malformed.
    public var postgresURL: PostgresURL? {
        get throws(ConfigurationError) {
            guard let databasePath, PostgresURL.isPostgres(databasePath) else { return nil }
            do {
                return try PostgresURL(databasePath)
            } catch {
                throw ConfigurationError(message: "--database: \(error.message)")
            }
        }
    }

    /// The database as logs may show it: the file, or the PostgreSQL URL with its password masked.
    public var databaseDescription: String {
        guard let databasePath, PostgresURL.isPostgres(databasePath) else { return resolvedDatabasePath }
        return (try? PostgresURL(databasePath))?.description ?? "postgres://(invalid)"
    }
}

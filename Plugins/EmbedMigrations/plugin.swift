import Foundation
import PackagePlugin

/// Embeds `Migrations/*.sql` into the target as `EmbeddedMigrations.swift`, so the binary
/// carries its schema and finds it from any working directory. ParlorPostgres gets `Migrations/postgres/*.sql`
/// (PostgreSQL's dialect) instead, importing ParlorStore for the `Migration` type.
@main
struct EmbedMigrations: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        let isPostgres = target.name == "ParlorPostgres"
        let directory = context.package.directoryURL.appending(path: isPostgres ? "Migrations/postgres" : "Migrations")
        let migrations = try migrationFiles(in: directory)
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedMigrations.swift")
        let imports = isPostgres ? ["--import", "ParlorStore"] : []

        return [
            .buildCommand(
                displayName: "Embedding \(migrations.count) migration(s) into \(target.name)",
                executable: try context.tool(named: "ParlorMigrationEmbedder").url,
                arguments: imports + [output.path(percentEncoded: false)] + migrations.map { $0.path(percentEncoded: false) },
                // Listing the files as inputs makes an edit to any of them re-run the embedder.
                inputFiles: migrations,
                outputFiles: [output]
            )
        ]
    }

    /// The `.sql` files directly inside `directory`, sorted by name; none if it does not exist.
    private func migrationFiles(in directory: URL) throws -> [URL] {
        let path = directory.path(percentEncoded: false)
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        // The path-based listing, because the URL-based one returns nothing for a symlinked directory.
        return try FileManager.default.contentsOfDirectory(atPath: path)
            .filter { $0.hasSuffix(".sql") }
            .sorted()
            .map { directory.appending(path: $0) }
    }
}

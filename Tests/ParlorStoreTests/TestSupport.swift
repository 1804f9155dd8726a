import Foundation
import Testing
import ParlorStore

/// Where a test's database lives; most behaviour must hold for both.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory, file
    var testDescription: String { rawValue }
}

/// Runs `body` with a fresh directory under the system temporary directory, removed afterwards.
func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    let path = FileManager.default.temporaryDirectory
        .appending(path: "parlor-store-tests-\(UUID().uuidString)")
        .path(percentEncoded: false)
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// Runs `body` with a database path of the given kind: `:memory:`, or a file in a temporary directory.
func withDatabasePath<T>(_ kind: StoreKind, _ body: (String) throws -> T) throws -> T {
    switch kind {
    case .memory: try body(":memory:")
    case .file: try withTemporaryDirectory { try body("\($0)/parlor.db") }
    }
}

/// Opens a database, runs `body` and closes it, even if `body` throws.
func withDatabase<T>(
    _ kind: StoreKind, migrations: [Migration] = Migrations.embedded, _ body: (Database) throws -> T
) throws -> T {
    try withDatabasePath(kind) { path in
        let database = try Database(DatabaseConfiguration(path: path, migrations: migrations))
        defer { database.close() }
        return try body(database)
    }
}

struct ExpectedFailure: Error, Equatable {}

extension SQLiteConnection {
    /// Inserts a user row; the schema requires one before rooms and members can reference it.
    func insertUser(_ id: String, name: String? = nil) throws {
        try run("INSERT INTO users (id, name, created_at) VALUES (?, ?, ?)", [.text(id), .text(name ?? id), 0])
    }

    func count(_ table: String) throws -> Int64? {
        try queryOne("SELECT count(*) AS n FROM \(table)")?.int("n")
    }

    func tableExists(_ name: String) throws -> Bool {
        try queryOne("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(name)]) != nil
    }
}

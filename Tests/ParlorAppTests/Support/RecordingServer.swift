import Foundation
import ParlorApp
import PostgresTestCluster

enum RecordingDatabase: CaseIterable, CustomStringConvertible {
    case sqlite, postgres
    var description: String { self == .sqlite ? "SQLite" : "PostgreSQL" }
}

let recordingAdminToken = "admin-token-for-recording-tests-0123"

/// A server with the real recording engine (MediaRecordingEngine, the default), the admin token and a recordings
/// directory of its own, on a fresh database.
func withRecordingServer<T>(_ database: RecordingDatabase, _ configure: (inout AppConfiguration) -> Void = { _ in },
                            _ body: (ParlorApplication) throws -> T) throws -> T {
    let databasePath: String? = database == .postgres ? try TestPostgres.shared().makeDatabase().string : nil
    return try withServer({ configuration in
        configuration.recordingEngine = .mediaRecorder
        configuration.adminToken = recordingAdminToken
        configuration.recordingsDirectory = NSTemporaryDirectory() + "/parlor-recordings-\(UUID().uuidString)"
        if let databasePath { configuration.databasePath = databasePath }
        configure(&configuration)
    }, body)
}

import Foundation
import ParlorApp
import ParlorLoop
import ParlorRooms
import PostgresTestCluster

/// A stand-in for the recording engine, left only in the two-node tests (RecordingClusterTests), which read which
/// node's engine was asked to start and stop; every other recording test uses the real MediaRecordingEngine. It records the
/// calls and writes what the domain reads: the directory, a manifest.json ("recording", then "complete"), and
/// placeholder files under the names the real engine uses, so the routes can be checked; no audio.
final class InterimRecordingEngine: RecordingEngine {
    struct Calls: Sendable {
        var starts: [RecordingStart] = []
        var stops: [String] = []
    }

    private let state = Locked((calls: Calls(), refuseStarts: false))
    private weak let rooms: RoomsService?

    init(rooms: RoomsService) { self.rooms = rooms }

    var calls: Calls { state.withLock { $0.calls } }

    /// From now on `start` throws (the domain must mark the recording failed).
    func refuseStarts() { state.withLock { $0.refuseStarts = true } }

    func start(_ recording: RecordingStart) throws {
        let refused = state.withLock { state -> Bool in
            state.calls.starts.append(recording)
            return state.refuseStarts
        }
        if refused { throw TestFailure("the interim engine refuses to start") }
        try FileManager.default.createDirectory(atPath: recording.directory, withIntermediateDirectories: true)
        try Self.manifest(recording.recordingID, roomID: recording.roomID, state: "recording", reason: nil)
            .write(to: URL(filePath: recording.directory + "/manifest.json"))
    }

    func stop(recordingID: String) {
        state.withLock { $0.calls.stops.append(recordingID) }
        finish(recordingID, reason: "requested")
    }

    func stopAll() {}

    /// Ends a recording as the real engine does when it stops by itself (disk-full, max-duration, failed).
    func stopByItself(_ recordingID: String, reason: String) { finish(recordingID, reason: reason) }

    private func finish(_ recordingID: String, reason: String) {
        guard let start = state.withLock({ $0.calls.starts.last { $0.recordingID == recordingID } }) else { return }
        let manifest = Self.manifest(recordingID, roomID: start.roomID, state: "complete", reason: reason)
        try? manifest.write(to: URL(filePath: start.directory + "/manifest.json"))
        // Placeholders under the real names: a real Ogg Opus file starts with "OggS".
        for file in ["mix.opus", "track-1.opus"] { try? Data("OggS".utf8).write(to: URL(filePath: start.directory + "/" + file)) }
        rooms?.recordingEnded(recordingID: recordingID, reason: reason, manifestJSON: Array(manifest))
    }

    /// The manifest as the seam's `RecordingManifest` encodes it (snake_case keys).
    static func manifest(_ recordingID: String, roomID: String, state: String, reason: String?) -> Data {
        var object: [String: Any] = [
            "recording_id": recordingID, "room_id": roomID, "started_at": 0, "duration_ms": 1500, "state": state,
            "mix": "mix.opus", "tracks": [["member": "MEM-x", "file": "track-1.opus", "offset_ms": 0, "duration_ms": 1500]],
        ]
        if let reason { object["stop_reason"] = reason }
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    }
}

/// The engine a test server makes, kept so the test can reach it.
final class InterimEngineHolder: Sendable {
    private let engine = Locked<InterimRecordingEngine?>(nil)
    /// Manifests `closeInterrupted` hands over at the next start, by recording id.
    let interrupted = Locked<[String: [UInt8]]>([:])

    var current: InterimRecordingEngine {
        get throws { try engine.withLock { $0 } ?? { throw TestFailure("no recording engine was made") }() }
    }

    var factory: RecordingEngineFactory {
        RecordingEngineFactory(make: { [self] _, rooms in
            let made = InterimRecordingEngine(rooms: rooms)
            engine.withLock { $0 = made }
            return made
        }, closeInterrupted: { [self] _ in interrupted.withLock { $0 } })
    }
}

enum RecordingDatabase: CaseIterable, CustomStringConvertible {
    case sqlite, postgres
    var description: String { self == .sqlite ? "SQLite" : "PostgreSQL" }
}

let recordingAdminToken = "admin-token-for-recording-tests-0123"

/// A server with the real engine (`engine`; nil: the interim one, for the tests that still need its hooks), the admin token and a recordings directory of its own, on a fresh database.
func withRecordingServer<T>(_ database: RecordingDatabase, holder: InterimEngineHolder = InterimEngineHolder(),
                            engine: RecordingEngineFactory? = .mediaRecorder, _ configure: (inout AppConfiguration) -> Void = { _ in },
                            _ body: (ParlorApplication, InterimEngineHolder) throws -> T) throws -> T {
    let databasePath: String? = database == .postgres ? try TestPostgres.shared().makeDatabase().string : nil
    return try withServer({ configuration in
        configuration.recordingEngine = engine ?? holder.factory
        configuration.adminToken = recordingAdminToken
        configuration.recordingsDirectory = NSTemporaryDirectory() + "/parlor-recordings-\(UUID().uuidString)"
        if let databasePath { configuration.databasePath = databasePath }
        configure(&configuration)
    }) { app in try body(app, holder) }
}

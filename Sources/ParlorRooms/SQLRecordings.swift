import ParlorStore

/// The recordings' rows (issue 38), read and written by both dialects with the same SQL.
public protocol RecordingReader {
    /// A room's recordings, newest first.
    func recordings(roomID: String) throws -> [RecordingRecord]
    func recording(id: String) throws -> RecordingRecord?
    /// Recordings whose engine has not finished them (state `recording`), of every room and node.
    func runningRecordings() throws -> [RecordingRecord]
    /// Recordings still `recording` whose engine is gone: at a start, this node's (`node`); with several nodes also
    /// those of nodes no longer alive (a node's id is new at each start).
    func recordingsLeftBehind(by node: String?) throws -> [RecordingRecord]
    /// The nodes alive now (several nodes on PostgreSQL); nil with one node.
    func liveNodes() throws -> Set<String>?
    /// Up to `limit` recordings started before `time` and no longer being recorded, oldest first (retention).
    func finishedRecordings(startedBefore time: Int64, limit: Int) throws -> [RecordingRecord]
}

/// What the rooms thread writes about recordings, in its batch's transaction.
public protocol RecordingWriter: RecordingReader {
    /// Throws `RoomError(.roomRecordingActive)` when the room has another recording not stopped yet (any node).
    func insertRecording(_ recording: RecordingRecord) throws
    /// Asked to stop, or stopped by itself: returns false if it had already stopped.
    func stopRecording(id: String, at time: Int64, reason: String) throws -> Bool
    /// The engine finished its files.
    func finishRecording(id: String, state: RecordingState, durationMs: Int64?, manifest: String?) throws
    func deleteRecording(id: String) throws
}

extension SQLRoomReading {
    public static var recordingColumns: String {
        "id, room_id, started_by, started_at, stopped_at, state, stop_reason, duration_ms, node, manifest"
    }

    public func recordings(roomID: String) throws -> [RecordingRecord] {
        try db.query("SELECT \(Self.recordingColumns) FROM recordings WHERE room_id = $1 ORDER BY started_at DESC, id DESC",
                     [.text(roomID)]).map(\.recordingRecord)
    }

    public func recording(id: String) throws -> RecordingRecord? {
        try db.queryOne("SELECT \(Self.recordingColumns) FROM recordings WHERE id = $1", [.text(id)])?.recordingRecord
    }

    public func runningRecordings() throws -> [RecordingRecord] {
        try db.query("SELECT \(Self.recordingColumns) FROM recordings WHERE state = 'recording'", []).map(\.recordingRecord)
    }

    public func recordingsLeftBehind(by node: String?) throws -> [RecordingRecord] {
        try runningRecordings().filter { $0.node == node }
    }

    public func liveNodes() throws -> Set<String>? { nil }

    public func finishedRecordings(startedBefore time: Int64, limit: Int) throws -> [RecordingRecord] {
        try db.query("""
            SELECT \(Self.recordingColumns) FROM recordings WHERE started_at < $1 AND state <> 'recording'
            ORDER BY started_at, id LIMIT $2
            """, [.integer(time), .integer(Int64(limit))]).map(\.recordingRecord)
    }
}

extension SQLRoomWriting {
    public func insertRecording(_ recording: RecordingRecord) throws {
        // Checked first rather than by the unique index: a failed statement would abort PostgreSQL's transaction.
        let running = try db.queryOne("SELECT id FROM recordings WHERE room_id = $1 AND stopped_at IS NULL", [.text(recording.roomID)])
        if let other = running?.string("id") {
            throw RoomError(.roomRecordingActive, "room \(recording.roomID) is already being recorded (\(other))")
        }
        try db.run("""
            INSERT INTO recordings (id, room_id, started_by, started_at, state, node) VALUES ($1, $2, $3, $4, 'recording', $5)
            """, [.text(recording.id), .text(recording.roomID), SQLValue(recording.startedBy), .integer(recording.startedAt),
                  SQLValue(recording.node)])
    }

    public func stopRecording(id: String, at time: Int64, reason: String) throws -> Bool {
        try db.run("UPDATE recordings SET stopped_at = $1, stop_reason = $2 WHERE id = $3 AND stopped_at IS NULL",
                   [.integer(time), .text(reason), .text(id)]) > 0
    }

    public func finishRecording(id: String, state: RecordingState, durationMs: Int64?, manifest: String?) throws {
        try db.run("UPDATE recordings SET state = $1, duration_ms = $2, manifest = COALESCE($3, manifest) WHERE id = $4",
                   [.text(state.rawValue), SQLValue(durationMs), SQLValue(manifest), .text(id)])
    }

    public func deleteRecording(id: String) throws {
        try db.run("DELETE FROM recordings WHERE id = $1", [.text(id)])
    }
}

extension Row {
    public var recordingRecord: RecordingRecord {
        RecordingRecord(id: string("id") ?? "", roomID: string("room_id") ?? "", startedBy: string("started_by"),
                        startedAt: int("started_at") ?? 0, stoppedAt: int("stopped_at"),
                        state: RecordingState(rawValue: string("state") ?? "") ?? .failed, stopReason: string("stop_reason"),
                        durationMs: int("duration_ms"), node: string("node"), manifest: string("manifest"))
    }
}

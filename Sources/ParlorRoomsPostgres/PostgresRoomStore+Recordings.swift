import ParlorRooms
import ParlorStore

extension PostgresRoomReading {
    /// A node's id is new at each start, so what a previous process left is found by its node's lease: rows of this
    /// node, and of nodes no longer alive (gone from `nodes`, or their lease ran out).
    public func recordingsLeftBehind(by node: String?) throws -> [RecordingRecord] {
        try db.query("""
            SELECT \(Self.recordingColumns) FROM recordings WHERE state = 'recording'
            AND (node IS NULL OR node = $1 OR node NOT IN (SELECT id FROM nodes WHERE lease_until >= \(PostgresRoomTransaction.databaseNow)))
            """, [.text(node ?? "")]).map(\.recordingRecord)
    }

    public func liveNodes() throws -> Set<String>? {
        Set(try db.query("SELECT id FROM nodes WHERE lease_until >= \(PostgresRoomTransaction.databaseNow)", []).compactMap { $0.string("id") })
    }
}

import ParlorPostgres
import ParlorRooms
import ParlorStore

// The media home of each room (rooms.media_node) and the messages relayed between it and the nodes holding the
// members' WebSockets (media_relay), Migrations/postgres/003_media_home.sql.
extension PostgresRoomTransaction: MediaHomeTransaction {
    func setMediaAddress(_ address: String) throws {
        try db.run("UPDATE nodes SET media_address = $2 WHERE id = $1", [.text(nodeID), .text(address)])
    }

    /// A home whose lease ended (a node that stopped gives it up at once) is replaced, even before its takeover.
    func chooseMediaHome(roomID: String) throws -> String {
        try db.queryOne("""
            UPDATE rooms SET media_node = CASE
                WHEN EXISTS (SELECT 1 FROM nodes WHERE nodes.id = rooms.media_node AND nodes.lease_until >= \(Self.databaseNow))
                THEN media_node ELSE $2 END
            WHERE id = $1 RETURNING media_node
            """, [.text(roomID), .text(nodeID)])?.string("media_node") ?? nodeID
    }

    func relayMedia(_ message: [UInt8], roomID: String, to node: String, at time: Int64) throws {
        // Nothing for a node whose row is gone (taken over): it would never take it.
        guard try db.run("""
            INSERT INTO media_relay (node_id, room_id, message, created_at)
            SELECT $1::text, $2::text, $3::bytea, $4::bigint WHERE EXISTS (SELECT 1 FROM nodes WHERE id = $1::text)
            """, [.text(node), .text(roomID), .blob(message), .integer(time)]) > 0 else { return }
        try notifyMedia(.relayed(node: node))
    }

    func takeMediaMessages() throws -> [(roomID: String, message: [UInt8])] {
        try db.query("DELETE FROM media_relay WHERE node_id = $1 RETURNING id, room_id, message", [.text(nodeID)])
            .sorted { ($0.int("id") ?? 0) < ($1.int("id") ?? 0) }
            .map { ($0.string("room_id") ?? "", $0.bytes("message") ?? []) }
    }

    func notifyMedia(_ signal: MediaHomeSignal) throws {
        guard let payload = signal.payload else { return }
        try db.run("SELECT pg_notify('\(PostgresClusterLink.channel)', $1::text)", [.text(payload)])
    }

    func releaseDeadMediaHomes() throws -> [(roomID: String, node: String)] {
        try db.run("DELETE FROM media_relay WHERE node_id NOT IN (SELECT id FROM nodes)")
        return try db.query("""
            WITH dead AS (SELECT id, media_node AS home FROM rooms
                          WHERE media_node IS NOT NULL AND media_node NOT IN (SELECT id FROM nodes) ORDER BY id FOR UPDATE)
            UPDATE rooms SET media_node = NULL FROM dead WHERE rooms.id = dead.id RETURNING rooms.id, dead.home
            """).map { ($0.string("id") ?? "", $0.string("home") ?? "") }
    }
}

import ParlorCodec
import ParlorPostgres
import ParlorRooms
import ParlorStore

// Several nodes on one database: room heads (locked or not), stored presence, node leases and the takeover of a
// dead node's members. Lease times are the database's clock, so the nodes' own clocks need not agree.
extension PostgresRoomTransaction: ClusterTransaction {
    /// Now in Unix ms by the database's clock (clock_timestamp: not frozen at the transaction's start).
    static let databaseNow = "(extract(epoch from clock_timestamp()) * 1000)::bigint"

    func roomHead(id: String, lock: Bool) throws -> (lastEventID: Int64, closed: Bool)? {
        let sql = "SELECT last_event_id, closed_at FROM rooms WHERE id = $1" + (lock ? " FOR UPDATE" : "")
        guard let row = try db.queryOne(sql, [.text(id)]) else { return nil }
        return (row.int("last_event_id") ?? 0, row.int("closed_at") != nil)
    }

    /// ORDER BY under FOR UPDATE: the rows are locked in id order (the sort runs below the row locking).
    func lockRooms(_ ids: [String]) throws -> [String: (lastEventID: Int64, closed: Bool)] {
        let array = "{" + ids.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
            .joined(separator: ",") + "}"
        var heads: [String: (lastEventID: Int64, closed: Bool)] = [:]
        for row in try db.query("SELECT id, last_event_id, closed_at FROM rooms WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE",
                                [.text(array)]) {
            heads[row.string("id") ?? ""] = (row.int("last_event_id") ?? 0, row.int("closed_at") != nil)
        }
        return heads
    }

    func presence(roomID: String) throws -> [String: MemberPresence] {
        var presence: [String: MemberPresence] = [:]
        for row in try db.query("SELECT id, disconnected_at, node_id FROM members WHERE room_id = $1 AND state = 'JOINED'",
                                [.text(roomID)]) {
            presence[row.string("id") ?? ""] = MemberPresence(disconnectedAt: row.int("disconnected_at"), nodeID: row.string("node_id"))
        }
        return presence
    }

    func registerNode(lease: Int64) throws {
        try db.run("""
            INSERT INTO nodes (id, started_at, lease_until) VALUES ($1, \(Self.databaseNow), \(Self.databaseNow) + $2)
            ON CONFLICT (id) DO UPDATE SET lease_until = excluded.lease_until
            """, [.text(nodeID), .integer(lease)])
    }

    /// Two statements: the nodes' rows are deleted first (waiting for any batch that holds one while handing it a
    /// member), so the second statement's snapshot sees what such batches committed. A member that another live node
    /// has attached goes to that node, present (MemberAttachments.swift); the others to this one, away.
    func takeOverExpiredNodes(at time: Int64) throws -> [TakenMember] {
        let dead = try db.query("DELETE FROM nodes WHERE id <> $1 AND lease_until < \(Self.databaseNow) RETURNING id", [.text(nodeID)])
            .compactMap { $0.string("id") }
        guard !dead.isEmpty else { return [] }
        return try db.query("""
            WITH dead AS (SELECT unnest(string_to_array($3, ' ')) AS id),
                 ended AS (UPDATE sessions SET ended_at = $2 WHERE ended_at IS NULL AND node_id IN (SELECT id FROM dead) RETURNING id),
                 unsent AS (DELETE FROM signals WHERE node_id IN (SELECT id FROM dead) RETURNING id),
                 detached AS (DELETE FROM member_attachments WHERE node_id IN (SELECT id FROM dead) RETURNING member_id),
                 heirs AS (
                     SELECT m.id, (SELECT min(a.node_id) FROM member_attachments a JOIN nodes n ON n.id = a.node_id
                                   WHERE a.member_id = m.id AND n.lease_until >= \(Self.databaseNow)
                                   AND a.node_id NOT IN (SELECT id FROM dead)) AS heir
                     FROM members m WHERE m.state = 'JOINED' AND m.node_id IN (SELECT id FROM dead)),
                 taken AS (
                     UPDATE members m SET node_id = COALESCE(h.heir, $1),
                                          disconnected_at = CASE WHEN h.heir IS NULL THEN COALESCE(m.disconnected_at, $2) END
                     FROM heirs h WHERE m.id = h.id
                     RETURNING m.id, m.room_id, m.node_id, m.disconnected_at)
            SELECT id, room_id, disconnected_at FROM taken WHERE node_id = $1 AND disconnected_at IS NOT NULL
            """, [.text(nodeID), .integer(time), .text(dead.joined(separator: " "))]).map { row in
            TakenMember(memberID: row.string("id") ?? "", roomID: row.string("room_id") ?? "", disconnectedAt: row.int("disconnected_at") ?? time)
        }
    }

    func claimMembership(roomID: String, userID: String, at time: Int64) throws -> (memberID: String, disconnectedAt: Int64?)? {
        guard let row = try db.queryOne("""
            UPDATE members SET disconnected_at = CASE WHEN node_id = $3 OR \(Self.attachedOnAnotherLiveNode(nodeParameter: 3))
                                                      THEN disconnected_at ELSE COALESCE(disconnected_at, $4) END,
                               node_id = $3
            WHERE room_id = $1 AND user_id = $2 AND state = 'JOINED' RETURNING id, disconnected_at
            """, [.text(roomID), .text(userID), .text(nodeID), .integer(time)]) else { return nil }
        return (row.string("id") ?? "", row.int("disconnected_at"))
    }

    func lockRoomCreation() throws {
        try db.run("SELECT pg_advisory_xact_lock(\(Self.roomCreationLockKey)) AS locked")
    }

    /// An arbitrary constant beside the migrator's ("parlor" + 1).
    static let roomCreationLockKey: Int64 = 0x7061_726C_6F73

    func openRoomIDs() throws -> [String] {
        try db.query("SELECT id FROM rooms WHERE closed_at IS NULL").compactMap { $0.string("id") }
    }

    func mayDrop(memberID: String, disconnectedAtOrBefore time: Int64) throws -> Bool {
        try db.queryOne("""
            SELECT 1 AS found FROM members WHERE id = $1 AND state = 'JOINED' AND (node_id IS NULL OR node_id = $2)
            AND disconnected_at IS NOT NULL AND disconnected_at <= $3 AND NOT \(Self.attachedOnAnotherLiveNode(nodeParameter: 2))
            """, [.text(memberID), .text(nodeID), .integer(time)]) != nil
    }

    /// The row holds the message as the WebSocket text frame it was before the rooms domain stopped framing (the
    /// stored format stays, so nodes of either version read each other's rows).
    func relaySignal(roomID: String, toMember memberID: String, message: [UInt8], at time: Int64) throws -> Bool {
        let frame = WebSocketFrameEncoder.frame(.text, payload: message)
        guard let holder = try db.queryOne("SELECT node_id FROM members WHERE id = $1 AND state = 'JOINED'", [.text(memberID)])?
            .string("node_id"), holder != nodeID else { return false }
        try db.run("INSERT INTO signals (node_id, room_id, to_member, frame, created_at) VALUES ($1, $2, $3, $4, $5)",
                   [.text(holder), .text(roomID), .text(memberID), .blob(frame), .integer(time)])
        try db.run("SELECT pg_notify('\(PostgresClusterLink.channel)', $1::text)", [.text("\(PostgresClusterLink.signalPrefix)\(holder)")])
        return true
    }

    func takeSignals() throws -> [(roomID: String, memberID: String, message: [UInt8])] {
        try db.query("DELETE FROM signals WHERE node_id = $1 RETURNING id, room_id, to_member, frame", [.text(nodeID)])
            .sorted { ($0.int("id") ?? 0) < ($1.int("id") ?? 0) }
            .map { ($0.string("room_id") ?? "", $0.string("to_member") ?? "", Self.payload(ofFrame: $0.bytes("frame") ?? [])) }
    }

    /// The payload of an unmasked frame as `relaySignal` stores it (its length takes 7, 7+16 or 7+64 bits).
    static func payload(ofFrame frame: [UInt8]) -> [UInt8] {
        guard frame.count >= 2 else { return [] }
        let start = switch frame[1] & 0x7F {
        case 126: 4
        case 127: 10
        default: 2
        }
        return frame.count >= start ? Array(frame[start...]) : []
    }

    func notifyUnstored(roomID: String, message: [UInt8]) throws {
        let payload = "\(PostgresClusterLink.unstoredPrefix)\(nodeID) \(roomID) " + String(decoding: message, as: UTF8.self)
        // NOTIFY's payload is under 8,000 bytes; a reaction is far smaller, so a bigger message is a caller's mistake.
        guard payload.utf8.count < 7_900 else { throw RoomError(.serverInternal, "an unstored message of \(message.count) bytes cannot be relayed") }
        try db.run("SELECT pg_notify('\(PostgresClusterLink.channel)', $1::text)", [.text(payload)])
    }

    /// Tells every listening node that the room changed, when (and only if) this transaction commits.
    func notifyRoomChanged(_ roomID: String, eventID: Int64) throws {
        try db.run("SELECT pg_notify('\(PostgresClusterLink.channel)', $1::text)", [.text("\(roomID) \(eventID)")])
    }
}

import ParlorPostgres
import ParlorStore

/// The `media_link_offers` table (Migrations/postgres/011): where each node takes media-link packets and its signed
/// link offer. Only the bytes are kept here; signing and verifying them is `ParlorMediaLink`'s. Every call blocks on
/// the database: call it off the event loops.
public struct PostgresMediaLinkOffers: Sendable {
    /// One node's published row.
    public struct Published: Sendable, Equatable {
        public let nodeID: String
        public let address: String
        public let offer: [UInt8]
    }

    let database: PostgresDatabase

    public init(database: PostgresDatabase) {
        self.database = database
    }

    /// Writes (or replaces) `nodeID`'s address and offer.
    public func publish(nodeID: String, address: String, offer: [UInt8]) throws {
        _ = try database.writeOnPool {
            try $0.run("""
                INSERT INTO media_link_offers (node_id, address, offer, updated_at) VALUES ($1, $2, $3, \(PostgresRoomTransaction.databaseNow))
                ON CONFLICT (node_id) DO UPDATE SET address = excluded.address, offer = excluded.offer, updated_at = excluded.updated_at
                """, [.text(nodeID), .text(address), .blob(offer)])
        }
    }

    /// Deletes `nodeID`'s row (a clean stop). Only a row whose offer is `offer`: a node started again under the same
    /// id may have replaced it already.
    public func remove(nodeID: String, offer: [UInt8]) throws {
        _ = try database.writeOnPool {
            try $0.run("DELETE FROM media_link_offers WHERE node_id = $1 AND offer = $2", [.text(nodeID), .blob(offer)])
        }
    }

    /// The rows of nodes that hold a lease now (`nodes.lease_until` by the database's clock), other than `exceptNodeID`;
    /// only `nodeID`'s when given.
    public func live(exceptNodeID: String, nodeID: String? = nil) throws -> [Published] {
        var sql = """
            SELECT o.node_id, o.address, o.offer FROM media_link_offers o JOIN nodes n ON n.id = o.node_id
            WHERE o.node_id <> $1 AND n.lease_until >= \(PostgresRoomTransaction.databaseNow)
            """
        var parameters: [SQLValue] = [.text(exceptNodeID)]
        if let nodeID {
            sql += " AND o.node_id = $2"
            parameters.append(.text(nodeID))
        }
        return try database.read { try $0.query(sql + " ORDER BY o.node_id", parameters) }.compactMap { row in
            guard let nodeID = row.string("node_id"), let address = row.string("address"), let offer = row.bytes("offer") else { return nil }
            return Published(nodeID: nodeID, address: address, offer: offer)
        }
    }
}

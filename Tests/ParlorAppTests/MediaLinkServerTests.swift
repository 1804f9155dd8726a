import Foundation
import ParlorApp
import ParlorMediaLink
import ParlorPostgres
import PostgresTestCluster
import Testing

/// `--cluster-media-address` and `--cluster-secret` in a running server (issue 41, step 2): two in-process nodes on
/// one PostgreSQL database publish their link offers, link, and carry packets; a clean stop removes the offer.
@Suite struct MediaLinkServerTests {
    static func node(_ url: PostgresURL, secret: String? = nil) throws -> ParlorApplication {
        var configuration = AppConfiguration.testing()
        configuration.databasePath = url.string
        configuration.jwtSecret = nil
        configuration.dataDirectory = NSTemporaryDirectory() + "/parlor-unused-\(UUID().uuidString)"
        configuration.rooms.nodeLease = .seconds(3)
        configuration.clusterMediaAddress = try AppConfiguration.parse(arguments: ["--cluster-media-address", "127.0.0.1:0"],
                                                                       environment: [:]).clusterMediaAddress
        configuration.clusterSecret = secret
        return try buildApplication(configuration)
    }

    static func offerRows(_ url: PostgresURL) throws -> [String] {
        let database = try PostgresDatabase(url: url)
        defer { database.close() }
        return try database.read { try $0.query("SELECT node_id FROM media_link_offers ORDER BY node_id") }.compactMap { $0.string("node_id") }
    }

    @Test(arguments: [nil, "a-cluster-secret-of-thirty-two-characters"])
    func twoNodesPublishOffersLinkAndCarryPackets(secret: String?) throws {
        let url = try TestPostgres.shared().makeDatabase()
        let nodes = try (0..<2).map { _ in try Self.node(url, secret: secret) }
        defer { nodes.forEach { $0.shutdown() } }
        let (a, b) = (try #require(nodes[0].mediaLink), try #require(nodes[1].mediaLink))
        #expect(try Self.offerRows(url) == [a.nodeID, b.nodeID].sorted())
        #expect(a.localAddress.port != 0 && a.localAddress.host == "127.0.0.1")

        let inbox = LinkInbox(b)
        #expect(try a.link(to: b.nodeID) == b.epoch)
        for index in 0..<100 { a.send(to: b.nodeID, room: "RM-room", speaker: "MEM-\(index % 4)", rtp: MediaLinkEndpointTests.rtp(index)) }
        let packets = try inbox.wait(for: 100)
        #expect(packets.map(\.packet.rtp) == (0..<100).map(MediaLinkEndpointTests.rtp))
        #expect(packets.map(\.packet.speaker) == (0..<100).map { "MEM-\($0 % 4)" })
        #expect(packets.allSatisfy { $0.packet.room == "RM-room" && $0.from == a.nodeID })

        let exposition = nodes[1].metrics.exposition(requests: [:])
        #expect(exposition.contains("parlor_media_link_packets_received_total 100"))
        #expect(exposition.contains(#"parlor_media_link_packets_dropped_total{reason="forged"} 0"#))
        #expect(nodes[0].metrics.exposition(requests: [:]).contains("parlor_media_link_packets_sent_total 100"))

        // A clean stop takes the node's offer with it.
        nodes[1].shutdown()
        #expect(try Self.offerRows(url) == [a.nodeID])
        #expect(throws: MediaLinkSetupError.noOffer(nodeID: b.nodeID)) { try a.link(to: b.nodeID) }
    }

    @Test func nodesUnderDifferentClusterSecretsDoNotLink() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let a = try Self.node(url, secret: "the-first-cluster-secret-0123456789")
        defer { a.shutdown() }
        let b = try Self.node(url, secret: "the-second-cluster-secret-012345678")
        defer { b.shutdown() }
        let (linkA, linkB) = (try #require(a.mediaLink), try #require(b.mediaLink))
        do {
            try linkA.link(to: linkB.nodeID)
            Issue.record("an offer signed under another secret was accepted")
        } catch {
            guard case .refused(_, .badSignature) = error else { throw error }
        }
        #expect(a.metrics.mediaLink.refusedOfferCount("bad_signature") >= 1)
    }

    @Test func withoutTheOptionThereIsNoLinkSocket() throws {
        let url = try TestPostgres.shared().makeDatabase()
        var configuration = AppConfiguration.testing()
        configuration.databasePath = url.string
        let app = try buildApplication(configuration)
        defer { app.shutdown() }
        #expect(app.mediaLink == nil)
        #expect(try Self.offerRows(url).isEmpty)
    }

    @Test func clusterOptionsAreValidated() throws {
        for bad in ["7000", "127.0.0.1:", "127.0.0.1:70000", "localhost:7000", "0.0.0.0:7000", "[::]:7000", "::1:7000"] {
            #expect(throws: ConfigurationError.self, "\(bad)") {
                try AppConfiguration.parse(arguments: ["--cluster-media-address", bad], environment: [:])
            }
        }
        #expect(throws: ConfigurationError.self) {
            try AppConfiguration.parse(arguments: ["--cluster-secret", String(repeating: "s", count: 31)], environment: [:])
        }
        let parsed = try AppConfiguration.parse(arguments: ["--cluster-media-address", "[::1]:7400"],
                                                environment: ["PARLOR_CLUSTER_SECRET": String(repeating: "s", count: 32)])
        #expect(parsed.clusterMediaAddress?.description == "[::1]:7400")
        #expect(parsed.clusterSecret?.count == 32)
        #expect(try AppConfiguration.parse(arguments: ["--cluster-media-address", "off"], environment: [:]).clusterMediaAddress == nil)

        // Links join nodes on one PostgreSQL database: with SQLite the option is refused before anything opens.
        var sqlite = AppConfiguration.testing()
        sqlite.clusterMediaAddress = parsed.clusterMediaAddress
        #expect(throws: ConfigurationError.self) { try buildApplication(sqlite).shutdown() }
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorLoop
import ParlorMedia
import ParlorMediaLink
import ParlorMetrics
import ParlorPostgres
import PostgresTestCluster
import Testing
@testable import ParlorApp

/// Media link endpoints (issue 41, step 2) on the test process's PostgreSQL: offers published and read back, keyed
/// UDP links on 127.0.0.1 with port 0, and every refusal counted by reason. Endpoints are made directly (with fixed
/// node ids, so a "restart" keeps the id); `MediaLinkServerTests` runs them inside two in-process servers.
@Suite struct MediaLinkEndpointTests {
    static let secret = try! MediaLinkSecret(Array("cluster-secret-for-media-link-tests".utf8))

    /// A database with the migrations applied and a live `nodes` row for each id.
    static func database(nodes: [String]) throws -> PostgresDatabase {
        let database = try PostgresDatabase(url: try TestPostgres.shared().makeDatabase())
        for node in nodes { try setLease(database, node: node, fromNow: 600_000) }
        return database
    }

    static func setLease(_ database: PostgresDatabase, node: String, fromNow milliseconds: Int64) throws {
        _ = try database.write {
            try $0.run("""
                INSERT INTO nodes (id, started_at, lease_until) VALUES ($1, 0, $2)
                ON CONFLICT (id) DO UPDATE SET lease_until = excluded.lease_until
                """, [.text(node), .integer(WallClock.nowMilliseconds() + milliseconds)])
        }
    }

    static func endpoint(_ node: String, _ database: PostgresDatabase, signingSecret: MediaLinkSecret? = nil) throws -> MediaLinkEndpoint {
        try MediaLinkEndpoint(nodeID: node, bindingTo: TransportAddress(host: "127.0.0.1", port: 0)!, database: database, secret: secret,
                              counters: MediaLinkCounters(), logger: Logger(level: .error), signingSecret: signingSecret)
    }

    static func rtp(_ index: Int) -> [UInt8] {
        [0x80, 0x6F, UInt8(index >> 8), UInt8(index & 0xFF), 0, 0, 0, 0, 0xCA, 0xFE, 0xBA, 0xBE] + [UInt8](repeating: UInt8(index % 251), count: 40 + index % 50)
    }

    @Test func aLinkCarriesEveryPacketIntactWithRoomAndSpeaker() throws {
        let database = try Self.database(nodes: ["NODE-a", "NODE-b"])
        defer { database.close() }
        let a = try Self.endpoint("NODE-a", database), b = try Self.endpoint("NODE-b", database)
        defer { a.stop(); b.stop() }
        let inbox = LinkInbox(b)

        #expect(try a.link(to: "NODE-b") == b.epoch)
        for index in 0..<100 { a.send(to: "NODE-b", room: "RM-\(index % 3)", speaker: "MEM-speaker", rtp: Self.rtp(index)) }
        let packets = try inbox.wait(for: 100)

        // B had no link to A: the first packet's unknown epoch made it read A's offer, holding the packets meanwhile.
        #expect(packets.map(\.packet.rtp) == (0..<100).map(Self.rtp))
        #expect(packets.map(\.packet.room) == (0..<100).map { "RM-\($0 % 3)" })
        #expect(packets.allSatisfy { $0.packet.speaker == "MEM-speaker" && $0.from == "NODE-a" })
        #expect(b.linkedEpoch(of: "NODE-a") == a.epoch)
        #expect(a.counters.sent.load() == 100 && b.counters.received.load() == 100)
        #expect(b.counters.droppedCount("unknown_epoch") == 0)

        // Both directions: B answers over the link it learnt.
        let back = LinkInbox(a)
        b.send(to: "NODE-a", room: "RM-0", speaker: "MEM-other", rtp: Self.rtp(7))
        let answer = try #require(try back.wait(for: 1).first)
        #expect(answer.packet.room == "RM-0" && answer.packet.speaker == "MEM-other" && answer.packet.rtp == Self.rtp(7))
        #expect(answer.packet.sequence == 0 && answer.from == "NODE-b")
        b.send(to: "NODE-nobody", room: "RM-0", speaker: "MEM-other", rtp: Self.rtp(7))
        try eventually { b.counters.unsentCount("no_link") == 1 }
    }

    @Test func forgedReplayedAndForeignPacketsAreDroppedAndCounted() throws {
        let database = try Self.database(nodes: ["NODE-a", "NODE-b", "NODE-c"])
        defer { database.close() }
        let a = try Self.endpoint("NODE-a", database), b = try Self.endpoint("NODE-b", database)
        // C reads the others' offers but does not know the cluster secret: its own offer is signed under another.
        let c = try Self.endpoint("NODE-c", database, signingSecret: try MediaLinkSecret(Array("not-the-cluster-secret-at-all-0123".utf8)))
        defer { a.stop(); b.stop(); c.stop() }
        let inbox = LinkInbox(b)
        let captured = Locked<[[UInt8]]>([])
        a.sentTap.withLock { $0 = { datagram, _ in captured.withLock { $0.append(datagram) } } }
        try a.link(to: "NODE-b")
        a.send(to: "NODE-b", room: "RM-1", speaker: "MEM-1", rtp: Self.rtp(1))
        _ = try inbox.wait(for: 1)
        let original = try #require(captured.withLock { $0.first })
        let raw = try RawUDPSender()

        // Replayed: the same datagram again. Forged: one byte of the ciphertext flipped on a fresh sequence number.
        try raw.send(original, to: b.localAddress)
        var forged = original
        forged[5 + 7] = 9  // sequence 9, never sent
        forged[20] ^= 0x01
        try raw.send(forged, to: b.localAddress)
        var truncated = original
        truncated.removeLast(truncated.count - 20)
        try raw.send(truncated, to: b.localAddress)
        // A marker from A over the same socket's queue: once it is in, the three before it were handled.
        a.send(to: "NODE-b", room: "RM-1", speaker: "MEM-1", rtp: Self.rtp(2))
        #expect(try inbox.wait(for: 2).last?.packet.rtp == Self.rtp(2))
        #expect(b.counters.droppedCount("replayed") == 1)
        #expect(b.counters.droppedCount("forged") == 1)
        #expect(b.counters.droppedCount("malformed") == 1)

        // C links to B (B's offer verifies under the cluster secret), but B refuses C's offer, so C's packets are of
        // an epoch no link of B's has.
        try c.link(to: "NODE-b")
        c.send(to: "NODE-b", room: "RM-1", speaker: "MEM-intruder", rtp: Self.rtp(3))
        try eventually { b.counters.droppedCount("unknown_epoch") == 1 }
        #expect(b.counters.refusedOfferCount("bad_signature") >= 1)
        #expect(b.linkedEpoch(of: "NODE-c") == nil)
        #expect(inbox.count == 2)
        #expect(throws: MediaLinkSetupError.self) { try a.link(to: "NODE-c") }
        #expect(b.counters.received.load() == 2)
    }

    @Test func aRestartedNodeHasANewEpochAndItsLinksRekey() throws {
        let database = try Self.database(nodes: ["NODE-a", "NODE-b"])
        defer { database.close() }
        let a = try Self.endpoint("NODE-a", database)
        var b = try Self.endpoint("NODE-b", database)
        defer { a.stop(); b.stop() }
        let fromB = LinkInbox(a)
        let captured = Locked<[[UInt8]]>([])
        b.sentTap.withLock { $0 = { datagram, _ in captured.withLock { $0.append(datagram) } } }
        try b.link(to: "NODE-a")
        b.send(to: "NODE-a", room: "RM-1", speaker: "MEM-1", rtp: Self.rtp(1))
        _ = try fromB.wait(for: 1)
        let oldEpoch = b.epoch
        let oldDatagram = try #require(captured.withLock { $0.first })

        // A clean stop deletes the row; a node started again under the same id publishes a new key and epoch.
        b.stop()
        #expect(throws: MediaLinkSetupError.noOffer(nodeID: "NODE-b")) { try a.link(to: "NODE-b") }
        b = try Self.endpoint("NODE-b", database)
        #expect(b.epoch != oldEpoch)
        let toB = LinkInbox(b)
        #expect(try a.link(to: "NODE-b") == b.epoch)
        for index in 0..<10 { a.send(to: "NODE-b", room: "RM-1", speaker: "MEM-2", rtp: Self.rtp(index)) }
        #expect(try toB.wait(for: 10).map(\.packet.rtp) == (0..<10).map(Self.rtp))

        // A packet of the old generation is told apart from a forgery: its epoch is one A retired.
        let raw = try RawUDPSender()
        try raw.send(oldDatagram, to: a.localAddress)
        b.send(to: "NODE-a", room: "RM-1", speaker: "MEM-3", rtp: Self.rtp(5))
        #expect(try fromB.wait(for: 2).last?.packet.speaker == "MEM-3")
        #expect(a.counters.droppedCount("wrong_epoch") == 1)
        #expect(a.linkedEpoch(of: "NODE-b") == b.epoch)
    }

    @Test func anOfferOfANodeWithoutALeaseOrPastItsFreshnessIsRefused() throws {
        let database = try Self.database(nodes: ["NODE-a", "NODE-b"])
        defer { database.close() }
        let a = try Self.endpoint("NODE-a", database), b = try Self.endpoint("NODE-b", database)
        defer { a.stop(); b.stop() }
        try Self.setLease(database, node: "NODE-b", fromNow: -1_000)
        #expect(throws: MediaLinkSetupError.noOffer(nodeID: "NODE-b")) { try a.link(to: "NODE-b") }

        // An offer signed longer ago than the window (3 × renewal, 60 s) is stale, even with a lease.
        try Self.setLease(database, node: "NODE-b", fromNow: 600_000)
        let keyPair = try X25519KeyPair()
        let old = try LinkOffer.make(nodeID: "NODE-b", keyPair: keyPair, createdAtMilliseconds: WallClock.nowMilliseconds() - 61_000)
        _ = try database.write {
            try $0.run("UPDATE media_link_offers SET offer = $2 WHERE node_id = $1", [.text("NODE-b"), .blob(try old.signed(with: Self.secret))])
        }
        do {
            try a.link(to: "NODE-b")
            Issue.record("a stale offer was accepted")
        } catch {
            guard case .refused(_, .stale) = error else { throw error }
        }
        #expect(a.counters.refusedOfferCount("stale") == 1)

        // A's genuine offer copied into another node's row does not make a link to that node.
        try Self.setLease(database, node: "NODE-x", fromNow: 600_000)
        _ = try database.write {
            try $0.run("INSERT INTO media_link_offers (node_id, address, offer, updated_at) SELECT 'NODE-x', address, offer, 0 FROM media_link_offers WHERE node_id = 'NODE-a'")
        }
        do {
            try b.link(to: "NODE-x")
            Issue.record("an offer under another node's id was accepted")
        } catch {
            guard case .refused(_, .malformed) = error else { throw error }
        }
        #expect(b.counters.refusedOfferCount("malformed") == 1)
    }
}

/// What an endpoint's handler received, awaited with a deadline.
final class LinkInbox: Sendable {
    private let packets = Locked<[(packet: MediaLinkPacket, from: String)]>([])
    private let arrived = DispatchSemaphore(value: 0)

    init(_ endpoint: MediaLinkEndpoint) {
        endpoint.onPacket { [packets, arrived] packet, from in
            packets.withLock { $0.append((packet, from)) }
            arrived.signal()
        }
    }

    var count: Int { packets.withLock { $0.count } }

    /// The first `count` packets, once they are in (10 s at most).
    func wait(for count: Int) throws -> [(packet: MediaLinkPacket, from: String)] {
        let deadline = DispatchTime.now() + 10
        while self.count < count {
            guard arrived.wait(timeout: deadline) == .success else { throw LinkTestError("\(self.count) of \(count) packets arrived") }
        }
        return packets.withLock { Array($0.prefix(count)) }
    }
}

/// A plain UDP socket that sends whatever bytes a test gives it (a replayed or tampered datagram).
final class RawUDPSender {
    let fd: Int32

    init() throws {
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw LinkTestError("socket failed") }
    }

    deinit { close(fd) }

    func send(_ bytes: [UInt8], to address: TransportAddress) throws {
        var (storage, length) = address.storage
        let sent = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, bytes, bytes.count, 0, $0, length) }
        }
        guard sent == bytes.count else { throw LinkTestError("sendto failed") }
    }
}

struct LinkTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Waits (5 s at most) for a counter the link's thread moves after a datagram with no reply to await.
func eventually(_ condition: () -> Bool) throws {
    let deadline = MonotonicClock.now() + 5_000_000_000
    while !condition() {
        guard MonotonicClock.now() < deadline else { throw LinkTestError("condition not met within 5 s") }
        usleep(5_000)
    }
}

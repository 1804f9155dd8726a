#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorApp
import PostgresTestCluster
import Testing

/// Issue 41 when a node dies: a node killed with SIGKILL takes only its own speakers with it, its clients resume on
/// another node and their re-offer restores their audio.
extension MediaCascadeTests {
    /// Alice speaks on node A, bob on node B (a `parlor serve` process), cleo listens on C and lena on A. B is killed:
    /// A and C hear alice throughout (no packet of her stream missing), bob's slot is freed, and bob, resumed on A,
    /// offers again and is heard on C.
    @Test func aKilledNodeTakesOnlyItsOwnSpeakersWithIt() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let a = try Self.node(url)
        defer { a.shutdown() }
        let c = try Self.node(url)
        defer { c.shutdown() }
        let directory = NSTemporaryDirectory() + "parlor-cascade-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let child = try ExecutableTests.Child(["serve", "--host", "127.0.0.1", "--port", "0", "--database", url.string,
                                               "--node-lease", "3", "--grace-period", "10", "--cluster-media-address", "127.0.0.1:0"],
                                              in: directory)
        defer {
            if child.process.isRunning {
                kill(child.process.processIdentifier, SIGKILL)
                _ = child.waitForExit(timeout: 5)
            }
        }
        let bPort = try ExecutableTests.port(fromListeningLine: try child.readLine())

        try withMediaClientLoop { loop in
            let room = try createRoom(a)
            let alice = try Member(a, "alice", in: room, speaker: true)
            let bobGrant = try auth(port: bPort, name: "bob")
            let bob = try Member(TestWebSocket(port: bPort, token: bobGrant.jwt, timeout: 15), "bob", in: room, speaker: true)
            let lena = try Member(a, "lena", in: room, speaker: false)
            let cleo = try Member(c, "cleo", in: room, speaker: false)
            defer { [alice, bob, lena, cleo].forEach { $0.media?.close() } }
            for listener in [lena, cleo] { try listener.offer(room, loop: loop, sends: false) }
            try alice.offer(room, loop: loop, sends: true)
            try bob.offer(room, loop: loop, sends: true)
            #expect(!bob.answered(by: a) && !bob.answered(by: c), "bob's media is not on his own node")

            let aliceStream = SFUTests.payload("alice streaming"), bobStream = SFUTests.payload("bob streaming")
            try alice.media?.startStreaming(aliceStream, level: 20)
            try bob.media?.startStreaming(bobStream, level: 20)
            for listener in [lena, cleo] {
                try listener.media?.waitForPacket { $0.payload == aliceStream }
                try listener.media?.waitForPacket { $0.payload == bobStream }
            }

            kill(child.process.processIdentifier, SIGKILL)
            #expect(child.waitForExit(timeout: 10) != nil)
            // Bob's packets stopped with his node: within the remote speakers' timeout his slot is freed on A and C.
            for listener in [lena, cleo] {
                _ = try SFUTests.slots(listener.socket, room) { slots in !slots.contains { $0["member_id"] as? String == bob.id } }
            }

            // Bob comes back through A and resumes; his client offers again (a new peer connection) and is heard on C.
            let back = try TestWebSocket(port: a.port, token: bobGrant.jwt, timeout: 15)
            let reply = try back.call("session:resume", ["session_id": bob.socket.sessionID,
                                                         "last_event_ids": [room: bob.socket.lastEventIDs[room] ?? 0]])
            #expect((reply["resumed"] as? [[String: Any]])?.compactMap { $0["cid"] as? String } == [room])
            let resumed = Member(socket: back, id: bob.id, name: "bob")
            defer { resumed.media?.close() }
            try resumed.offer(room, loop: loop, sends: true)
            #expect(resumed.answered(by: a))
            let marker = SFUTests.payload("bob again")
            try resumed.media?.startStreaming(marker, level: 20)
            for listener in [lena, cleo] { try listener.media?.waitForPacket { $0.payload == marker } }
            try resumed.media?.stopStreaming()

            // Alice was heard throughout: her stream's sequence numbers have no gap on either listener.
            let fence = SFUTests.payload("alice fence")
            try alice.media?.stopStreaming()
            try alice.media?.send(fence, level: 20)
            for listener in [lena, cleo] {
                let received = try #require(try listener.media?.waitForPacket { $0.payload == fence })
                let sequences = received.filter { $0.payload == aliceStream || $0.payload == fence }.map { Int($0.sequence) }
                let unwrapped = sequences.enumerated().map { index, sequence in
                    sequence + 65_536 * sequences[..<index].indices.count(where: { $0 > 0 && sequences[$0] < sequences[$0 - 1] })
                }
                #expect(unwrapped.count > 20 && unwrapped.last! - unwrapped.first! + 1 == unwrapped.count,
                        "\(listener.name) missed some of alice's packets: \(unwrapped.count) over \(unwrapped.last! - unwrapped.first! + 1)")
            }
        }
    }
}

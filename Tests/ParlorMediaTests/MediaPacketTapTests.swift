import Foundation
import ParlorLoop
import ParlorMediaClient
import Synchronization
import Testing
@testable import ParlorMedia

/// The recording tap (issue 38): every packet a permitted sender's worker decrypts reaches the group's tap once,
/// on whichever worker owns the sender, and forwarding is the same with or without it.
@Suite struct MediaPacketTapTests {
    /// Counts what it is given; `packets` as (member, sequence number).
    final class CountingTap: MediaPacketTap {
        let seen = Mutex<[(member: String, sequence: UInt16, arrival: UInt64)]>([])
        func received(rtp: [UInt8], member: String, arrival: UInt64) {
            let sequence = UInt16(rtp[2]) << 8 | UInt16(rtp[3])
            seen.withLock { $0.append((member, sequence, arrival)) }
        }
        var count: Int { seen.withLock { $0.count } }
    }

    /// A connected `MediaPeer` and what it received, for blocking waits.
    final class Peer: @unchecked Sendable {  // `peer` is touched only on `loop`; `condition` guards `received` and `connected`
        let loop: EventLoop
        let peer: MediaPeer
        private let condition = NSCondition()
        private var received = 0
        private var connected = false

        init(loop: EventLoop, server: MediaServer, session: UInt64, group: String, member: String) throws {
            self.loop = loop
            peer = try MediaPeer(loop: loop)
            peer.connected = { [weak self] in self?.update { $0.connected = true } }
            peer.received = { [weak self] _, _ in self?.update { $0.received += 1 } }
            let (text, setup) = try server.answer(offer: peer.offer(slots: 2, sends: true), session: session, group: group, member: member, maySend: true)
            server.open(setup)
            let answer = try MediaAnswer(parsing: text)
            let result: Result<Void, any Error> = loop.submitAndWait { [peer] in Result { try peer.connect(to: answer) } }
            try result.get()
            try wait("DTLS connected") { _, connected in connected }
        }

        func send(_ payload: [UInt8]) throws {
            let result: Result<Void, any Error> = loop.submitAndWait { [peer] in Result { try peer.sendRTP(payload, level: 30) } }
            try result.get()
        }

        /// Waits until `predicate(received, connected)` holds.
        func wait(_ what: String, until predicate: (Int, Bool) -> Bool) throws {
            condition.lock()
            defer { condition.unlock() }
            let deadline = Date().addingTimeInterval(10)
            while !predicate(received, connected), condition.wait(until: deadline) {}
            guard predicate(received, connected) else { throw MediaClientError("not within 10 s: \(what)") }
        }

        func close() { loop.submitAndWait { [peer] in peer.close() } }

        private func update(_ change: (Peer) -> Void) {
            condition.lock()
            change(self)
            condition.broadcast()
            condition.unlock()
        }
    }

    @Test func everyPermittedPacketReachesTheTapOnEveryWorkerAndForwardingIsUnchanged() throws {
        var configuration = MediaServerConfiguration(bind: TransportAddress(host: "127.0.0.1", port: 0)!, slots: 2)
        configuration.workers = 2
        let server = try MediaServer(configuration: configuration, logger: Logger(level: .off))
        try server.start(events: { _ in })
        defer { server.stop() }
        let loop = try EventLoop(name: "tap-clients")
        loop.start()
        defer {
            loop.stop()
            loop.waitUntilStopped()
        }
        let tap = CountingTap()
        server.setTap(group: "room", tap)
        server.setSenders(group: "room", members: ["A", "B"])
        // Two sessions, two workers: each sender is decrypted on a worker of its own.
        let a = try Peer(loop: loop, server: server, session: 1, group: "room", member: "A")
        let b = try Peer(loop: loop, server: server, session: 2, group: "room", member: "B")
        let c = try Peer(loop: loop, server: server, session: 3, group: "room", member: "C")  // may not send
        defer { [a, b, c].forEach { $0.close() } }
        #expect(server.workerStatistics.map(\.sessions).sorted() == [1, 2])

        for _ in 0..<10 {
            try a.send([0xF8, 0xFF, 0xFE])
            try b.send([0xF8, 0xFF, 0xFE])
            try c.send([0xF8, 0xFF, 0xFE])
        }
        // A hears B's 10, B hears A's 10, C hears both.
        try a.wait("B's packets at A") { received, _ in received == 10 }
        try b.wait("A's packets at B") { received, _ in received == 10 }
        try c.wait("the senders' packets at C") { received, _ in received == 20 }
        let forwardedWithTap = server.onLoop { $0.forwardedPackets }
        #expect(forwardedWithTap == 40)
        let seen = tap.seen.withLock { $0 }
        #expect(seen.filter { $0.member == "A" }.map(\.sequence) == Array(1...10))
        #expect(seen.filter { $0.member == "B" }.map(\.sequence) == Array(1...10))
        #expect(!seen.contains { $0.member == "C" }, "a member who may not send was tapped")
        let now = MonotonicClock.now()
        #expect(seen.allSatisfy { $0.arrival <= now && now - $0.arrival < 10_000_000_000 }, "arrival is not the monotonic clock")

        // Without the tap: nothing more reaches it, and the same packets are forwarded as with it.
        server.setTap(group: "room", nil)
        _ = server.onLoop { _ in 0 }  // every worker has taken the change (packets already on their way may be tapped)
        for _ in 0..<10 {
            try a.send([0xF8, 0xFF, 0xFE])
            try b.send([0xF8, 0xFF, 0xFE])
        }
        try a.wait("B's packets at A") { received, _ in received == 20 }
        try b.wait("A's packets at B") { received, _ in received == 20 }
        try c.wait("the senders' packets at C") { received, _ in received == 40 }
        #expect(server.onLoop { $0.forwardedPackets } - forwardedWithTap == 40)
        #expect(tap.count == 20)

        // A tap set while sessions are open reaches them; one for another group does not see this one.
        let later = CountingTap(), other = CountingTap()
        server.setTap(group: "room", later)
        server.setTap(group: "elsewhere", other)
        _ = server.onLoop { _ in 0 }
        try a.send([0xF8, 0xFF, 0xFE])
        try b.wait("A's packet at B") { received, _ in received == 21 }
        #expect(later.count == 1 && other.count == 0)

        // Taps compose (a recording and a live stream at once): each sees every packet, and removing one leaves the other.
        let live = CountingTap()
        server.setTap(group: "room", purpose: .liveStream, live)
        _ = server.onLoop { _ in 0 }
        try a.send([0xF8, 0xFF, 0xFE])
        try b.wait("A's packet at B") { received, _ in received == 22 }
        #expect(later.count == 2 && live.count == 1)
        server.setTap(group: "room", purpose: .recording, nil)
        _ = server.onLoop { _ in 0 }
        try a.send([0xF8, 0xFF, 0xFE])
        try b.wait("A's packet at B") { received, _ in received == 23 }
        #expect(later.count == 2 && live.count == 2)
    }
}

import ParlorLoop
import Testing
@testable import ParlorMedia

/// `UDPSendQueue`: datagrams packed into one reused buffer go out in `sendmmsg` batches, unreachable ones dropped,
/// and the queue is empty (its capacity kept) afterwards. `batchEnded` runs after each received batch.
@Suite struct UDPSendQueueTests {
    typealias Inbox = UDPSocketTests.Inbox
    typealias Sockets = UDPSocketTests.Sockets

    /// Counts `batchEnded` calls; touched on the loop thread only.
    final class Counter: @unchecked Sendable {  // the loop thread increments, the test reads through onLoop
        var value = 0
    }

    @Test func queuedDatagramsGoOutInBatchesAndTheQueueEmpties() throws {
        let loop = try EventLoop(name: "udp-queue")
        loop.start()
        defer {
            loop.stop()
            loop.waitUntilStopped()
        }
        let loopback = try #require(TransportAddress(host: "127.0.0.1", port: 0))
        let inbox = Inbox()
        let batches = Counter()
        let sockets = Sockets(a: try UDPSocket(loop: loop, bindingTo: loopback) { _, _ in },
                              b: try UDPSocket(loop: loop, bindingTo: loopback) { inbox.append($0, from: $1) })
        sockets.b.batchEnded = { batches.value += 1 }
        try UDPSocketTests.onLoop(loop) { try sockets.b.start() }
        defer { _ = try? UDPSocketTests.onLoop(loop) { sockets.a.close(); sockets.b.close() } }
        let v6 = try #require(TransportAddress(host: "::1", port: 9))  // an IPv4 socket cannot send there

        let payloads = (0..<40).map { [UInt8($0)] + Array(repeating: 0x5A, count: 60 + $0) }
        let result = try UDPSocketTests.onLoop(loop) { () -> (sent: Int, left: Int, calls: Int, dropped: Int) in
            var queue = UDPSendQueue(reservingBytes: 0)
            for (index, payload) in payloads.enumerated() {
                queue.append(payload, to: sockets.b.localAddress)
                if index == 20 { queue.append([0xFF], to: v6) }
            }
            let sent = sockets.a.send(&queue)
            return (sent, queue.count, sockets.a.sendCalls, sockets.a.datagramsDropped)
        }
        #expect(result.sent == 40)
        #expect(result.left == 0)
        #expect(result.dropped == 1)
        #expect(result.calls >= 2)
        #expect(inbox.wait(for: 40).map(\.bytes) == payloads)
        #expect(try UDPSocketTests.onLoop(loop) { batches.value } >= 2, "40 datagrams take two recvmmsg batches at least")
    }
}

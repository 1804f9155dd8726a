#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorLoop
import Testing
@testable import ParlorMedia

/// `UDPSocket`: two sockets on 127.0.0.1 port 0 on a running loop, exchanging batches through recvmmsg/sendmmsg.
@Suite struct UDPSocketTests {
    /// What a socket received, filled on the loop thread and awaited by the test.
    final class Inbox: @unchecked Sendable {  // every access holds `condition`
        private let condition = NSCondition()
        private var datagrams: [(bytes: [UInt8], source: TransportAddress)] = []

        func append(_ bytes: [UInt8], from source: TransportAddress) {
            condition.lock()
            datagrams.append((bytes, source))
            condition.broadcast()
            condition.unlock()
        }

        /// Waits (up to 5 s) until `count` datagrams arrived; returns what did.
        func wait(for count: Int) -> [(bytes: [UInt8], source: TransportAddress)] {
            condition.lock()
            defer { condition.unlock() }
            let deadline = Date().addingTimeInterval(5)
            while datagrams.count < count, condition.wait(until: deadline) {}
            return datagrams
        }
    }

    /// Holds loop-confined sockets so `@Sendable` loop tasks can reach them.
    final class Sockets: @unchecked Sendable {  // only touched on the loop thread, after init
        let a: UDPSocket
        let b: UDPSocket
        init(a: UDPSocket, b: UDPSocket) {
            self.a = a
            self.b = b
        }
    }

    @discardableResult
    static func onLoop<T: Sendable>(_ loop: EventLoop, _ body: @escaping @Sendable () throws -> T) throws -> T {
        let result = LockedResult<T>()
        loop.execute { result.set(Result { try body() }) }
        return try result.wait().get()
    }

    final class LockedResult<T: Sendable>: @unchecked Sendable {  // every access holds `condition`
        private let condition = NSCondition()
        private var value: Result<T, any Error>?
        func set(_ result: Result<T, any Error>) {
            condition.lock()
            value = result
            condition.broadcast()
            condition.unlock()
        }
        func wait() -> Result<T, any Error> {
            condition.lock()
            defer { condition.unlock() }
            while value == nil { condition.wait() }
            return value!
        }
    }

    @Test func twoSocketsExchangeBatchesBothWays() throws {
        let loop = try EventLoop(name: "udp-batches")
        loop.start()
        defer {
            loop.stop()
            loop.waitUntilStopped()
        }
        let loopback = try #require(TransportAddress(host: "127.0.0.1", port: 0))
        let inboxA = Inbox(), inboxB = Inbox()
        let sockets = Sockets(a: try UDPSocket(loop: loop, bindingTo: loopback) { inboxA.append($0, from: $1) },
                              b: try UDPSocket(loop: loop, bindingTo: loopback) { inboxB.append($0, from: $1) })
        #expect(sockets.a.localAddress.port != 0 && sockets.a.localAddress.port != sockets.b.localAddress.port)
        try Self.onLoop(loop) {
            try sockets.a.start()
            try sockets.b.start()
        }
        defer { _ = try? Self.onLoop(loop) { sockets.a.close(); sockets.b.close() } }

        // 40 datagrams, more than one batch, sent in one loop turn: B then reads them in two recvmmsg calls.
        let outgoing = (0..<40).map { index in
            UDPDatagram(bytes: [UInt8(index)] + Array(repeating: 0xA5, count: 100 + index), destination: sockets.b.localAddress)
        }
        let sent = try Self.onLoop(loop) { sockets.a.send(outgoing) }
        #expect(sent == 40)
        let atB = inboxB.wait(for: 40)
        #expect(atB.map(\.bytes) == outgoing.map(\.bytes))
        #expect(atB.allSatisfy { $0.source == sockets.a.localAddress })
        let counters = try Self.onLoop(loop) { (sockets.a.sendCalls, sockets.b.receiveCalls, sockets.b.datagramsReceived) }
        #expect(counters.0 == 2)  // 32 + 8
        #expect(counters.1 <= 3 && counters.2 == 40)

        // And back: B answers each to its source.
        try Self.onLoop(loop) { _ = sockets.b.send(atB.map { UDPDatagram(bytes: Array($0.bytes.reversed()), destination: $0.source) }) }
        let atA = inboxA.wait(for: 40)
        #expect(atA.map(\.bytes) == outgoing.map { Array($0.bytes.reversed()) })
        #expect(atA.allSatisfy { $0.source == sockets.b.localAddress })
    }

    @Test func anUnsendableDestinationIsDroppedAndTheRestGoOut() throws {
        let loop = try EventLoop(name: "udp-drop")
        loop.start()
        defer {
            loop.stop()
            loop.waitUntilStopped()
        }
        let loopback = try #require(TransportAddress(host: "127.0.0.1", port: 0))
        let inbox = Inbox()
        let sockets = Sockets(a: try UDPSocket(loop: loop, bindingTo: loopback) { _, _ in },
                              b: try UDPSocket(loop: loop, bindingTo: loopback) { inbox.append($0, from: $1) })
        try Self.onLoop(loop) { try sockets.b.start() }
        defer { _ = try? Self.onLoop(loop) { sockets.a.close(); sockets.b.close() } }
        let v6 = try #require(TransportAddress(host: "::1", port: 9))  // an IPv4 socket cannot send there
        let datagrams = [UDPDatagram(bytes: [1], destination: sockets.b.localAddress), UDPDatagram(bytes: [2], destination: v6),
                         UDPDatagram(bytes: [3], destination: sockets.b.localAddress)]
        let sent = try Self.onLoop(loop) { sockets.a.send(datagrams) }
        #expect(sent == 2)
        #expect(inbox.wait(for: 2).map(\.bytes) == [[1], [3]])
        #expect(try Self.onLoop(loop) { sockets.a.datagramsDropped } == 1)
    }

    @Test func transportAddressesConvertBothWays() throws {
        for (host, port) in [("127.0.0.1", UInt16(5004)), ("::1", 9), ("2001:db8::42", 65535)] {
            let address = try #require(TransportAddress(host: host, port: port))
            #expect(address.host == host)
            let (storage, _) = address.storage
            #expect(TransportAddress(storage: storage) == address)
        }
        #expect(TransportAddress(host: "localhost", port: 1) == nil)
        #expect(TransportAddress(host: "::1", port: 80)!.description == "[::1]:80")
    }
}

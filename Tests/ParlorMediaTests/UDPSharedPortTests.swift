import Foundation
import ParlorLoop
import Testing
@testable import ParlorMedia

/// The media workers' shared port: a second socket bound to the receive socket's port (SO_REUSEPORT) sends from that
/// port, and `steerToFirst` keeps every incoming datagram on the first socket, whatever its source (the kernel would
/// otherwise hash sources over both).
@Suite struct UDPSharedPortTests {
    @Test func everyDatagramReachesTheFirstSocketAndTheSecondSendsFromTheSamePort() throws {
        let loop = try EventLoop(name: "udp-shared-port")
        loop.start()
        defer {
            loop.stop()
            loop.waitUntilStopped()
        }
        let loopback = try #require(TransportAddress(host: "127.0.0.1", port: 0))
        let first = UDPSocketTests.Inbox(), second = UDPSocketTests.Inbox(), client = UDPSocketTests.Inbox()
        let receiver = try UDPSocket(loop: loop, bindingTo: loopback, sharingPort: true) { first.append($0, from: $1) }
        try receiver.steerToFirst()
        let sender = try UDPSocket(loop: loop, bindingTo: receiver.localAddress, sharingPort: true) { second.append($0, from: $1) }
        #expect(sender.localAddress == receiver.localAddress)
        // Sixteen sources, four datagrams each: with the kernel's hash alone, all on one socket is a 1 in 65,536 chance.
        let clients = try (0..<16).map { _ in try UDPSocket(loop: loop, bindingTo: loopback) { client.append($0, from: $1) } }
        let sockets = UDPSocketTests.Sockets(a: receiver, b: sender)
        final class Clients: @unchecked Sendable {  // only touched on the loop thread
            let all: [UDPSocket]
            init(_ all: [UDPSocket]) { self.all = all }
        }
        let boxed = Clients(clients)
        try UDPSocketTests.onLoop(loop) {
            try sockets.a.start()
            try sockets.b.start()  // reading, so a datagram hashed to it would be seen
            for socket in boxed.all { try socket.start() }
        }
        defer { _ = try? UDPSocketTests.onLoop(loop) { sockets.a.close(); sockets.b.close(); boxed.all.forEach { $0.close() } } }

        let target = receiver.localAddress
        try UDPSocketTests.onLoop(loop) {
            for (index, socket) in boxed.all.enumerated() {
                _ = socket.send((0..<4).map { UDPDatagram(bytes: [UInt8(index), UInt8($0)], destination: target) })
            }
        }
        #expect(first.wait(for: 64).count == 64)
        // Loopback queues a datagram before send returns: two loop passes later the second socket has read anything it got.
        try UDPSocketTests.onLoop(loop) {}
        try UDPSocketTests.onLoop(loop) {}
        #expect(second.wait(for: 0).isEmpty, "a datagram went to the send-only socket")

        let destination = clients[0].localAddress
        try UDPSocketTests.onLoop(loop) { _ = sockets.b.send([UDPDatagram(bytes: [42], destination: destination)]) }
        let answer = client.wait(for: 1)
        #expect(answer.map(\.bytes) == [[42]])
        #expect(answer.first?.source == target, "the second socket sent from another port")
    }
}

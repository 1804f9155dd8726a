#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import ParlorLoop

/// `SocketAddress.connectBlocking`, the bench generators' setup sockets: against a real listener on 127.0.0.1.
@Suite struct BlockingConnectTests {
    @Test func connectsWithItsTimeoutsAndNoDelayThenReadsTheGreeting() throws {
        let server = try EchoServer(greeting: "hello")
        defer { server.stop() }
        let fd = try server.address.connectBlocking(sendTimeout: .seconds(5), receiveTimeout: .milliseconds(1500))
        defer { close(fd) }
        var receive = timeval(), size = socklen_t(MemoryLayout<timeval>.size)
        getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &receive, &size)
        #expect(receive.tv_sec == 1 && receive.tv_usec == 500_000)
        var send = timeval()
        getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send, &size)
        #expect(send.tv_sec == 5 && send.tv_usec == 0)
        var noDelay: Int32 = 0, intSize = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, &intSize)
        #expect(noDelay != 0)
        var bytes = [UInt8](repeating: 0, count: 5)
        #expect(recv(fd, &bytes, bytes.count, Int32(MSG_WAITALL)) == 5)
        #expect(String(decoding: bytes, as: UTF8.self) == "hello")
    }

    @Test func aRefusedConnectThrowsECONNREFUSED() throws {
        let port = try OutboundConnectTests.portJustClosed()
        let address = try #require(SocketAddress(host: "127.0.0.1", port: port))
        let error = try #require(throws: SystemError.self) {
            _ = try address.connectBlocking(sendTimeout: .seconds(5), receiveTimeout: .seconds(5))
        }
        #expect(error.errno == ECONNREFUSED)
        #expect(error.call == "connect to 127.0.0.1:\(port)")
    }
}

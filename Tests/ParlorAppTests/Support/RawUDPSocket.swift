import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ParlorMedia

/// A plain blocking UDP socket on 127.0.0.1, for sending what no client would.
final class RawUDPSocket {
    let fd: Int32

    init() throws {
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket failed") }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    func send(_ bytes: [UInt8], toPort port: UInt16) throws {
        var (storage, length) = TransportAddress(host: "127.0.0.1", port: port)!.storage
        let sent = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, bytes, bytes.count, 0, $0, length) }
        }
        guard sent == bytes.count else { throw TestFailure("sendto failed") }
    }

    /// One datagram (throws after 5 s without).
    func receive() throws -> [UInt8] {
        guard let datagram = receive(within: 5) else { throw TestFailure("nothing arrived") }
        return datagram
    }

    /// One datagram, or nil when none arrives within `seconds`.
    func receive(within seconds: Double) -> [UInt8]? {
        var pollDescriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pollDescriptor, 1, Int32(seconds * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 2048)
        let count = recv(fd, &buffer, buffer.count, 0)
        return count >= 0 ? Array(buffer.prefix(count)) : nil
    }

    /// Every datagram that arrives until `seconds` pass without one: their sizes.
    func drain(quietFor seconds: Double) -> [Int] {
        var sizes: [Int] = []
        while let datagram = receive(within: seconds) { sizes.append(datagram.count) }
        return sizes
    }

    /// The port this socket is bound to (after its first send).
    var localPort: UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return UInt16(bigEndian: address.sin_port)
    }
}

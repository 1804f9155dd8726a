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
        var buffer = [UInt8](repeating: 0, count: 2048)
        let count = recv(fd, &buffer, buffer.count, 0)
        guard count >= 0 else { throw TestFailure("nothing arrived") }
        return Array(buffer.prefix(count))
    }
}

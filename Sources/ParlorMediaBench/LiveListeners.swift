#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorLoop

/// `--live-listeners N` (issue 38): N HTTP listeners of the room's live stream (GET /rooms/ID/live.ogg), each
/// connection read as fast as it comes by one thread polling them all, so none is cut off as a slow reader. They
/// only listen: what is measured is what serving them costs the server.
final class LiveListeners: @unchecked Sendable {  // `fds` is written only before the thread starts; the rest is Locked
    private var fds: [Int32] = []
    private let bytes = Locked<Int>(0)
    private let closed = Locked<Int>(0)
    private let stopping = Locked(false)
    private let done = DispatchSemaphore(value: 0)

    /// Opens `count` streams with `token` (a member of `room`); each answers 200 before this returns.
    init(port: Int, room: String, token: String, count: Int) throws {
        let request = Array("GET /rooms/\(room)/live.ogg HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\r\n".utf8)
        for index in 0..<count {
            let socket = try BlockingSocket(port: port)
            try socket.write(request)
            while HeadScan.end(socket.buffer) == nil { try socket.fill() }
            let head = String(decoding: socket.buffer.prefix(40), as: UTF8.self)
            guard head.hasPrefix("HTTP/1.1 200") else { throw BenchError("live listener \(index): \(head.prefix(40))") }
            let fd = socket.detach()
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            fds.append(fd)
        }
        Thread { [self] in run() }.start()
    }

    /// Body bytes read so far, all listeners together.
    var bytesRead: Int { bytes.withLock { $0 } }
    /// Listeners whose stream the server ended.
    var closedByServer: Int { closed.withLock { $0 } }

    private func run() {
        var polled = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !stopping.withLock({ $0 }) {
            guard poll(&polled, nfds_t(polled.count), 100) > 0 else { continue }
            var read = 0, ended = 0
            for index in polled.indices where polled[index].revents != 0 && polled[index].fd >= 0 {
                let count = Glibc.read(polled[index].fd, &buffer, buffer.count)
                if count > 0 {
                    read += count
                } else if count == 0 || (errno != EAGAIN && errno != EINTR) {
                    Glibc.close(polled[index].fd)
                    polled[index].fd = -1
                    ended += 1
                }
            }
            bytes.withLock { $0 += read }
            if ended > 0 { closed.withLock { $0 += ended } }
        }
        for entry in polled where entry.fd >= 0 { Glibc.close(entry.fd) }
        done.signal()
    }

    func closeAll() {
        stopping.withLock { $0 = true }
        _ = done.wait(timeout: .now() + 2)
    }
}

#if canImport(Glibc)
import Glibc
#endif
import ParlorLoop

/// A blocking TCP connection to 127.0.0.1 for the unmeasured setup (HTTP requests, the WebSocket upgrade and the
/// signalling requests); reads give up after 30 s, so a stuck server ends the run instead of hanging it.
final class BlockingSocket {
    private(set) var fd: Int32
    var buffer: [UInt8] = []

    init(port: Int) throws {
        do {
            fd = try SocketAddress(host: "127.0.0.1", port: port)!.connectBlocking(sendTimeout: .seconds(30), receiveTimeout: .seconds(30))
        } catch {
            throw BenchError("\(error)")
        }
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { throw BenchError("write: errno \(errno)") }
            offset += written
        }
    }

    /// Appends what one read returns to `buffer`; throws at the end of the stream or after the timeout.
    func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw BenchError(count == 0 ? "connection closed by the server" : "read: errno \(errno)") }
            buffer += chunk[0..<count]
            return
        }
    }

    /// Gives the descriptor away (to the keeper loop); this object no longer closes it.
    func detach() -> Int32 {
        let descriptor = fd
        fd = -1
        return descriptor
    }
}

/// A failed step of the run, as a sentence.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

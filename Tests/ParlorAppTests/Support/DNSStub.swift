#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// A DNS server on `address`:53 (UDP) for one test: while answering, every A question gets 127.0.0.1 and every other
/// question an empty answer; once `stopAnswering()` is called it reads queries and never replies, the way a name
/// server that is going away (a compose network being torn down) looks to a resolver. Needs root for port 53.
/// Its thread runs until `stop()`, which the test must call (a `defer`).
final class DNSStub: Sendable {
    let address: String
    private let fd: Int32
    private let answering = Atomic<Bool>(true)
    private let running = Atomic<Bool>(true)
    /// Queries read, answered or not.
    let queries = Atomic<Int>(0)
    private let done = DispatchSemaphore(value: 0)

    init(address: String) throws {
        self.address = address
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket failed") }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_port = in_port_t(53).bigEndian
        local.sin_addr.s_addr = inet_addr(address)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { close(fd); throw TestFailure("bind \(address):53 failed: errno \(errno)") }
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)  // so the thread sees `stop()` soon
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    func stopAnswering() { answering.store(false, ordering: .sequentiallyConsistent) }

    func stop() {
        guard running.exchange(false, ordering: .sequentiallyConsistent) else { return }
        done.wait()
        close(fd)
    }

    private func serve() {
        defer { done.signal() }
        var buffer = [UInt8](repeating: 0, count: 1500)
        while running.load(ordering: .sequentiallyConsistent) {
            var peer = sockaddr_in()
            var peerLength = socklen_t(MemoryLayout<sockaddr_in>.size)
            let count = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, &buffer, buffer.count, 0, $0, &peerLength) }
            }
            guard count > 0 else { continue }
            queries.add(1, ordering: .relaxed)
            guard answering.load(ordering: .sequentiallyConsistent), let reply = Self.reply(to: Array(buffer.prefix(count))) else { continue }
            _ = withUnsafePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, reply, reply.count, 0, $0, peerLength) }
            }
        }
    }

    /// The answer to one query with one question: A → 127.0.0.1 (TTL 0), anything else → no records.
    static func reply(to query: [UInt8]) -> [UInt8]? {
        guard query.count > 12, query[4] == 0, query[5] == 1 else { return nil }
        var index = 12
        while index < query.count, query[index] != 0 { index += Int(query[index]) + 1 }  // the question's name
        guard index + 4 < query.count else { return nil }
        let questionEnd = index + 5
        let isA = query[index + 1] == 0 && query[index + 2] == 1
        var reply = Array(query[0..<2]) + [0x81, 0x80, 0, 1, 0, isA ? 1 : 0, 0, 0, 0, 0]
        reply += query[12..<questionEnd]
        if isA { reply += [0xC0, 0x0C, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 127, 0, 0, 1] }
        return reply
    }
}

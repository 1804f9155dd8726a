#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// The physical floor of a delivery: one `writev` of an event-sized frame to a loopback TCP socket, round-robin over
/// many sockets, while a reader thread drains them (poll). On loopback the sender's system call also runs the
/// receiver's TCP input, so the sender thread's CPU per `writev` is what one delivery cannot cost less than.
struct FloorProbe {
    var sockets = 1000
    var frameBytes = 200
    var seconds = 2.0

    struct Result {
        var writes: Int
        var senderCPUSeconds: Double
        var wallSeconds: Double
        var microsecondsPerWrite: Double { writes > 0 ? senderCPUSeconds / Double(writes) * 1e6 : 0 }

        func json(_ probe: FloorProbe) -> [String: Any] {
            ["sockets": probe.sockets, "frame_bytes": probe.frameBytes, "writes": writes, "wall_seconds": wallSeconds,
             "sender_cpu_seconds": senderCPUSeconds, "cpu_us_per_writev": microsecondsPerWrite]
        }
    }

    func run() -> Result {
        let (senders, receivers) = connectPairs()
        defer { for fd in senders + receivers { close(fd) } }
        let stop = ReaderState()
        let reader = Thread { drain(receivers, until: stop) }
        reader.start()

        let frame = [UInt8](repeating: 0x61, count: frameBytes)
        var writes = 0
        let wallStart = Clock.now()
        let cpuStart = threadCPUSeconds()
        let end = wallStart + Int64(seconds * 1e9)
        frame.withUnsafeBytes { bytes in
            var vector = iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress), iov_len: bytes.count)
            var index = 0
            while true {
                // The clock is read once per round of all sockets, so the probe times the writes, not the clock.
                if index == 0, Clock.now() >= end { break }
                if writev(senders[index], &vector, 1) == bytes.count { writes += 1 }
                index = index + 1 == senders.count ? 0 : index + 1
            }
        }
        let cpu = threadCPUSeconds() - cpuStart
        let wall = Double(Clock.now() - wallStart) / 1e9
        // Stop the reader and wait until it is out before the sockets close.
        stop.phase.store(1, ordering: .releasing)
        while stop.phase.load(ordering: .acquiring) != 2 { usleep(1_000) }
        return Result(writes: writes, senderCPUSeconds: cpu, wallSeconds: wall)
    }

    private func connectPairs() -> (senders: [Int32], receivers: [Int32]) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { die("floor probe: socket: \(errno)") }
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 1024) == 0 && getsockname(listener, pointer, &length) == 0
            }
        }
        guard bound else { die("floor probe: cannot listen on 127.0.0.1: \(errno)") }
        var senders: [Int32] = [], receivers: [Int32] = []
        for _ in 0..<sockets {
            let sender = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(sender, $0, length) == 0 }
            }
            guard sender >= 0, connected else { die("floor probe: connect: \(errno)") }
            var on: Int32 = 1  // like the server's sockets
            setsockopt(sender, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            let receiver = accept(listener, nil, nil)
            guard receiver >= 0 else { die("floor probe: accept: \(errno)") }
            _ = fcntl(receiver, F_SETFL, fcntl(receiver, F_GETFL) | O_NONBLOCK)
            senders.append(sender)
            receivers.append(receiver)
        }
        return (senders, receivers)
    }

    /// The reader: poll over every receiving end, each ready socket read until it would block.
    private func drain(_ receivers: [Int32], until stop: ReaderState) {
        var polled = receivers.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        while stop.phase.load(ordering: .acquiring) == 0 {
            guard poll(&polled, nfds_t(polled.count), 50) > 0 else { continue }
            for index in polled.indices where polled[index].revents != 0 {
                while read(polled[index].fd, buffer, 64 * 1024) > 0 {}
            }
        }
        buffer.deallocate()
        stop.phase.store(2, ordering: .releasing)
    }

    private func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

/// The reader's phase: 0 draining, 1 asked to stop, 2 stopped.
private final class ReaderState: Sendable {
    let phase = Atomic<Int>(0)
}

#if canImport(Glibc)
import Glibc
#endif
import CParlorSystem
import ParlorLoop

/// A datagram to send: its bytes and where to.
public struct UDPDatagram: Sendable, Equatable {
    public var bytes: [UInt8]
    public var destination: TransportAddress

    public init(bytes: [UInt8], destination: TransportAddress) {
        self.bytes = bytes
        self.destination = destination
    }
}

/// A non-blocking UDP socket on one event loop, reading and writing in batches (`recvmmsg`/`sendmmsg`): the media
/// port. Create it anywhere, then `start()` it on its loop; from then on `receive` hears every datagram on the loop
/// thread, and `send` and `close` are called there too.
public final class UDPSocket: DescriptorHandler {
    /// Datagrams read or written per system call, and the size of one receive slot (larger datagrams are dropped:
    /// media datagrams stay under the 1200-byte WebRTC MTU).
    public static let batchSize = 32
    public static let slotSize = 2048
    /// Batches read per readable event before the loop gets to run other work.
    static let batchesPerWakeUp = 8

    public let loop: EventLoop
    public let fd: Int32
    public let localAddress: TransportAddress
    private let receive: (_ datagram: [UInt8], _ source: TransportAddress) -> Void
    /// Called on the loop after each received batch has been handed to `receive`: where a caller sends what the
    /// batch produced in one go (the media server's forwarding queue). Set before `start`.
    public var batchEnded: (() -> Void)?
    private var registration: DescriptorRegistration?
    private(set) var isOpen = true

    // Reused for every batch: no allocation per system call.
    private var receiveBuffer = [UInt8](repeating: 0, count: UDPSocket.batchSize * UDPSocket.slotSize)
    private var lengths = [UInt32](repeating: 0, count: UDPSocket.batchSize)
    private var truncated = [UInt8](repeating: 0, count: UDPSocket.batchSize)
    private var sources = [sockaddr_storage](repeating: sockaddr_storage(), count: UDPSocket.batchSize)
    private var sendBuffer: [UInt8] = []
    private var sendOffsets: [UInt32] = []
    private var sendLengths: [UInt32] = []
    private var destinations: [sockaddr_storage] = []
    private var destinationLengths: [socklen_t] = []

    /// Counters for metrics: system calls and datagrams each way, and datagrams dropped (too large on receive, a
    /// full socket buffer on send).
    public private(set) var receiveCalls = 0, datagramsReceived = 0, sendCalls = 0, datagramsSent = 0, datagramsDropped = 0

    /// Binds a UDP socket to `address` (port 0 picks a free one; see `localAddress`). `sharingPort`: SO_REUSEPORT,
    /// so the media workers' send sockets bind the same port (`steerToFirst` keeps every datagram on the first).
    public init(loop: EventLoop, bindingTo address: TransportAddress, sharingPort: Bool = false,
                receive: @escaping (_ datagram: [UInt8], _ source: TransportAddress) -> Void) throws(SystemError) {
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        var fd: Int32 = -1
        repeat { fd = socket(family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw SystemError("socket") }
        if sharingPort, parlor_udp_reuse_port(fd) != 0 {
            let error = SystemError("setsockopt SO_REUSEPORT")
            Glibc.close(fd)
            throw error
        }
        var (storage, length) = address.storage
        let bound = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        var local = sockaddr_storage()
        var localLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &localLength) }
        }
        guard bound == 0, named == 0, let localAddress = TransportAddress(storage: local) else {
            let error = SystemError(bound != 0 ? "bind \(address)" : "getsockname")
            Glibc.close(fd)
            throw error
        }
        self.loop = loop
        self.fd = fd
        self.localAddress = localAddress
        self.receive = receive
    }

    deinit { if isOpen { Glibc.close(fd) } }

    /// Every datagram to the shared port goes to this socket's SO_REUSEPORT group's first socket (the first bound),
    /// none to the send-only ones bound after it. Call right after binding the first one.
    public func steerToFirst() throws(SystemError) {
        guard parlor_udp_steer_to_first(fd) == 0 else { throw SystemError("setsockopt SO_ATTACH_REUSEPORT_CBPF") }
    }

    /// Registers for reading. Loop thread only.
    public func start() throws(SystemError) {
        loop.assertInLoop()
        guard isOpen, registration == nil else { return }
        registration = try loop.register(descriptor: fd, interest: .read, handler: self)
    }

    /// Deregisters and closes the socket. Loop thread only.
    public func close() {
        loop.assertInLoop()
        guard isOpen else { return }
        isOpen = false
        if let registration { loop.deregister(registration) }
        registration = nil
        Glibc.close(fd)
    }

    public func handleDescriptorEvent(readable: Bool, writable: Bool, hangUp: Bool) {
        loop.assertInLoop()
        guard readable else { return }
        for _ in 0..<Self.batchesPerWakeUp {
            guard isOpen else { return }
            let count = receiveBatch()
            if count > 0 { batchEnded?() }
            if count < Self.batchSize { return }
        }
    }

    /// One `recvmmsg`; hands each datagram to `receive`. Returns how many arrived.
    private func receiveBatch() -> Int {
        let count = Int(receiveBuffer.withUnsafeMutableBufferPointer { buffer in
            parlor_udp_receive_batch(fd, buffer.baseAddress, Self.slotSize, UInt32(Self.batchSize), &lengths, &truncated, &sources)
        })
        receiveCalls += 1
        guard count > 0 else { return 0 }
        for index in 0..<count {
            guard truncated[index] == 0, let source = TransportAddress(storage: sources[index]) else {
                datagramsDropped += 1
                continue
            }
            let start = index * Self.slotSize
            datagramsReceived += 1
            receive(Array(receiveBuffer[start..<(start + Int(lengths[index]))]), source)
            guard isOpen else { return count }
        }
        return count
    }

    /// Sends the datagrams in batches of `batchSize`; returns how many the kernel took. What it did not take (a full
    /// socket buffer) is dropped, as a router would. Loop thread only.
    @discardableResult
    public func send(_ datagrams: [UDPDatagram]) -> Int {
        loop.assertInLoop()
        guard isOpen else { return 0 }
        var sent = 0
        var start = 0
        while start < datagrams.count {
            let batch = datagrams[start..<min(start + Self.batchSize, datagrams.count)]
            let (taken, error) = sendBatch(batch)
            sent += taken
            start += taken
            guard taken < batch.count else { continue }
            if error == EAGAIN || error == EWOULDBLOCK || error == ENOBUFS {
                datagramsDropped += datagrams.count - start
                break
            }
            // This one destination failed (unreachable, wrong family): drop it, go on with the others.
            datagramsDropped += 1
            start += 1
        }
        return sent
    }

    /// Counts one `sendmmsg` for the counters (UDPSendQueue.swift sends through the same C call).
    func recordBatch(sent: Int) {
        sendCalls += 1
        datagramsSent += sent
    }

    func recordDropped(_ count: Int) { datagramsDropped += count }

    /// One `sendmmsg`: how many the kernel took, and errno if it stopped short.
    private func sendBatch(_ batch: ArraySlice<UDPDatagram>) -> (taken: Int, error: Int32) {
        sendBuffer.removeAll(keepingCapacity: true)
        sendOffsets.removeAll(keepingCapacity: true)
        sendLengths.removeAll(keepingCapacity: true)
        destinations.removeAll(keepingCapacity: true)
        destinationLengths.removeAll(keepingCapacity: true)
        for datagram in batch {
            sendOffsets.append(UInt32(sendBuffer.count))
            sendLengths.append(UInt32(datagram.bytes.count))
            sendBuffer += datagram.bytes
            let (storage, length) = datagram.destination.storage
            destinations.append(storage)
            destinationLengths.append(length)
        }
        let result = Int(parlor_udp_send_batch(fd, sendBuffer, sendOffsets, sendLengths, destinations, destinationLengths, UInt32(batch.count)))
        let error = result < 0 ? errno : 0
        sendCalls += 1
        let taken = max(0, result)
        datagramsSent += taken
        return (taken, error)
    }
}

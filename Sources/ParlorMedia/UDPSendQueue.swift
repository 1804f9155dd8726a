#if canImport(Glibc)
import Glibc
#endif
import CParlorSystem

/// Datagrams waiting to go out, packed into one reused byte buffer: what the forwarding path fills for every
/// subscriber of a packet without a heap allocation per datagram (the arrays keep their capacity across flushes).
/// `UDPSocket.send(_:)` sends and empties it. Loop-thread state, like the socket.
public struct UDPSendQueue {
    var bytes: [UInt8] = []
    var offsets: [UInt32] = []
    var lengths: [UInt32] = []
    var destinations: [sockaddr_storage] = []
    var destinationLengths: [socklen_t] = []

    public init(reservingBytes: Int = 64 * 1024) {
        bytes.reserveCapacity(reservingBytes)
    }

    public var count: Int { lengths.count }
    public var isEmpty: Bool { lengths.isEmpty }

    public mutating func append(_ datagram: [UInt8], to destination: TransportAddress) {
        offsets.append(UInt32(bytes.count))
        lengths.append(UInt32(datagram.count))
        bytes.append(contentsOf: datagram)
        let (storage, length) = destination.storage
        destinations.append(storage)
        destinationLengths.append(length)
    }

    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        offsets.removeAll(keepingCapacity: true)
        lengths.removeAll(keepingCapacity: true)
        destinations.removeAll(keepingCapacity: true)
        destinationLengths.removeAll(keepingCapacity: true)
    }
}

extension UDPSocket {
    /// Sends everything queued in batches of `batchSize` and empties the queue; returns how many the kernel took.
    /// What a full socket buffer refuses is dropped, as `send([UDPDatagram])` does. Loop thread only.
    @discardableResult
    public func send(_ queue: inout UDPSendQueue) -> Int {
        loop.assertInLoop()
        defer { queue.removeAll() }
        guard isOpen, !queue.isEmpty else { return 0 }
        var sent = 0
        var start = 0
        let total = queue.count
        while start < total {
            let count = min(Self.batchSize, total - start)
            let result = queue.bytes.withUnsafeBufferPointer { bytes in
                queue.offsets.withUnsafeBufferPointer { offsets in
                    queue.lengths.withUnsafeBufferPointer { lengths in
                        queue.destinations.withUnsafeBufferPointer { destinations in
                            queue.destinationLengths.withUnsafeBufferPointer { destinationLengths in
                                Int(parlor_udp_send_batch(fd, bytes.baseAddress, offsets.baseAddress! + start, lengths.baseAddress! + start,
                                                          destinations.baseAddress! + start, destinationLengths.baseAddress! + start,
                                                          UInt32(count)))
                            }
                        }
                    }
                }
            }
            let error = result < 0 ? errno : 0
            let taken = max(0, result)
            recordBatch(sent: taken)
            sent += taken
            start += taken
            guard taken < count else { continue }
            if error == EAGAIN || error == EWOULDBLOCK || error == ENOBUFS {
                recordDropped(total - start)
                break
            }
            recordDropped(1)  // this one destination failed: go on with the others
            start += 1
        }
        return sent
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// Bytes received but not yet consumed by a decoder.
///
/// Consumption only moves a read index; the storage is compacted once the consumed prefix is large
/// enough for the copy to pay off, so feeding bytes one at a time stays linear overall and an idle
/// connection does not keep a big buffer alive.
struct ReceiveBuffer: Sendable {
    private(set) var storage: [UInt8] = []
    private(set) var readIndex = 0

    /// Buffers at most this large keep their capacity when emptied, to avoid reallocating on every read. A WebSocket
    /// passes 0: its connection is idle most of the time, and 10,000 of them each kept their last buffer
    /// (bench/HISTORY.md, session 21).
    private let retainedCapacity: Int
    /// A consumed prefix is only moved out once it is at least this large (and half the storage).
    private static let compactionThreshold = 1024

    init(retainedCapacity: Int = 4096) {
        self.retainedCapacity = retainedCapacity
    }

    var readableCount: Int { storage.count - readIndex }
    var isEmpty: Bool { readIndex == storage.count }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        storage.append(contentsOf: bytes)
    }

    mutating func append(_ bytes: [UInt8]) {
        storage.append(contentsOf: bytes)
    }

    /// The unconsumed byte at `offset` (relative to the read position).
    subscript(offset: Int) -> UInt8 {
        storage[readIndex + offset]
    }

    /// Unconsumed bytes `range` (relative to the read position), without copying.
    func slice(_ range: Range<Int>) -> ArraySlice<UInt8> {
        storage[(readIndex + range.lowerBound)..<(readIndex + range.upperBound)]
    }

    /// Relative offset of the first `byte` at or after relative offset `start`.
    func firstOffset(of byte: UInt8, from start: Int) -> Int? {
        // memchr on the contiguous bytes: every line of every request head is found here.
        storage.withUnsafeBufferPointer { bytes in
            let from = readIndex + start
            guard from < bytes.count, let base = bytes.baseAddress,
                  let found = memchr(base + from, Int32(byte), bytes.count - from) else { return nil }
            return base.distance(to: found.assumingMemoryBound(to: UInt8.self)) - readIndex
        }
    }

    mutating func consume(_ count: Int) {
        precondition(count <= readableCount, "consuming more bytes than buffered")
        readIndex += count
        compactIfWorthwhile()
    }

    /// Copies out and consumes the next `count` bytes.
    mutating func read(_ count: Int) -> [UInt8] {
        let bytes = Array(slice(0..<count))
        consume(count)
        return bytes
    }

    /// Copies out and consumes everything buffered.
    mutating func readAll() -> [UInt8] {
        read(readableCount)
    }

    private mutating func compactIfWorthwhile() {
        if readIndex == storage.count {
            storage.removeAll(keepingCapacity: storage.capacity <= retainedCapacity)
            readIndex = 0
        } else if readIndex >= Self.compactionThreshold && readIndex * 2 >= storage.count {
            storage.removeSubrange(..<readIndex)
            readIndex = 0
        }
    }
}

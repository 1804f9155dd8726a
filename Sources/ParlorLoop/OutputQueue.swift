#if canImport(Glibc)
import Glibc
#endif

/// Byte chunks waiting to be written, flushed with one writev per readiness. Chunks are kept as given,
/// so a frame shared by many connections is stored once.
struct OutputQueue {
    private var chunks: [[UInt8]] = []
    private var head = 0          // index of the first unwritten chunk
    private var headOffset = 0    // bytes of chunks[head] already written
    private(set) var byteCount = 0
    /// The most bytes ever pending at once (a large queue leaves freed memory behind when released).
    private(set) var peakByteCount = 0
    private static let maxVectors = 64

    var isEmpty: Bool { byteCount == 0 }

    mutating func append(_ bytes: [UInt8]) {
        chunks.append(bytes)
        byteCount += bytes.count
        peakByteCount = max(peakByteCount, byteCount)
    }

    /// Drops every chunk not yet started, keeping a partly written one so the byte stream stays well-formed.
    mutating func discardUnstarted() {
        let keep = headOffset > 0 ? 1 : 0
        let kept = Array(chunks[head..<min(chunks.count, head + keep)])
        chunks = kept
        head = 0
        byteCount = kept.first.map { $0.count - headOffset } ?? 0
    }

    mutating func removeAll() {
        chunks = []
        head = 0
        headOffset = 0
        byteCount = 0
    }

    /// Calls `body` with up to 64 iovecs covering the pending bytes in order.
    func withIOVectors(_ body: (UnsafePointer<iovec>, Int) -> Int) -> Int {
        let end = min(chunks.count, head + Self.maxVectors)
        return withUnsafeTemporaryAllocation(of: iovec.self, capacity: end - head) { vectors in
            fillVectors(vectors, from: head, to: end, body)
        }
    }

    /// Fills `vectors` for chunks[index..<end], each inside its own `withUnsafeBytes` and calling `body` from the
    /// innermost one, so every iovec points into bytes whose closure is still open (no pointer escapes).
    /// Recursion depth is at most `maxVectors`.
    private func fillVectors(_ vectors: UnsafeMutableBufferPointer<iovec>, from index: Int, to end: Int,
                             _ body: (UnsafePointer<iovec>, Int) -> Int) -> Int {
        if index == end { return body(vectors.baseAddress!, end - head) }
        let offset = index == head ? headOffset : 0
        return chunks[index].withUnsafeBytes { raw in
            vectors[index - head] = iovec(iov_base: UnsafeMutableRawPointer(mutating: raw.baseAddress! + offset),
                                          iov_len: raw.count - offset)
            return fillVectors(vectors, from: index + 1, to: end, body)
        }
    }

    /// Calls `body` with the unwritten part of the first chunk (TLS writes one record source at a time).
    func withFirstChunk<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        chunks[head].withUnsafeBytes { raw in body(UnsafeRawBufferPointer(rebasing: raw[headOffset...])) }
    }

    mutating func consume(_ count: Int) {
        var remaining = count
        byteCount -= count
        while remaining > 0 {
            let available = chunks[head].count - headOffset
            if remaining >= available {
                remaining -= available
                head += 1
                headOffset = 0
            } else {
                headOffset += remaining
                remaining = 0
            }
        }
        if head == chunks.count {
            chunks.removeAll(keepingCapacity: chunks.count <= 16)
            head = 0
        } else if head > 32, head * 2 > chunks.count {
            // Compact only once the written prefix is most of the array, so a long queue costs amortized O(1) per chunk.
            chunks.removeFirst(head)
            head = 0
        }
    }
}

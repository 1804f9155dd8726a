#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import ParlorLoop

/// The output queue's byte stream: what withIOVectors offers, in order, after appends, partial writes and discards.
@Suite struct OutputQueueTests {
    /// Copies what the iovecs cover, as writev would, writing at most `limit` bytes; returns the bytes taken.
    static func write(_ queue: inout OutputQueue, limit: Int = .max) -> [UInt8] {
        var taken: [UInt8] = []
        let count = queue.withIOVectors { vectors, count in
            for index in 0..<count where taken.count < limit {
                let vector = vectors[index]
                let raw = UnsafeRawBufferPointer(start: vector.iov_base, count: vector.iov_len)
                taken += raw.prefix(limit - taken.count)
            }
            return taken.count
        }
        queue.consume(count)
        return taken
    }

    /// Writes everything, `step` bytes at most per call, as a slow socket would.
    static func drain(_ queue: inout OutputQueue, step: Int) -> [UInt8] {
        var out: [UInt8] = []
        while !queue.isEmpty { out += write(&queue, limit: step) }
        return out
    }

    static func chunk(_ index: Int, length: Int) -> [UInt8] {
        (0..<length).map { UInt8(truncatingIfNeeded: index &* 31 &+ $0) }
    }

    @Test func partialWritesKeepTheByteStreamInOrder() {
        var queue = OutputQueue()
        let chunks = (0..<5).map { Self.chunk($0, length: 10 + $0 * 7) }
        for chunk in chunks { queue.append(chunk) }
        #expect(queue.byteCount == chunks.reduce(0) { $0 + $1.count })
        let out = Self.drain(&queue, step: 3)
        #expect(out == chunks.flatMap { $0 })
        #expect(queue.byteCount == 0 && queue.isEmpty)
    }

    @Test func moreThanSixtyFourChunksTakeSeveralWritesOfAtMostSixtyFourVectors() {
        var queue = OutputQueue()
        let chunks = (0..<150).map { Self.chunk($0, length: 1 + $0 % 9) }
        for chunk in chunks { queue.append(chunk) }
        var vectorCounts: [Int] = []
        var out: [UInt8] = []
        while !queue.isEmpty {
            var taken: [UInt8] = []
            let count = queue.withIOVectors { vectors, count in
                vectorCounts.append(count)
                for index in 0..<count {
                    taken += UnsafeRawBufferPointer(start: vectors[index].iov_base, count: vectors[index].iov_len)
                }
                return taken.count
            }
            queue.consume(count)
            out += taken
        }
        #expect(vectorCounts == [64, 64, 22])
        #expect(out == chunks.flatMap { $0 })
    }

    @Test func consumeAcrossChunkBoundariesStartsTheNextVectorMidChunk() {
        var queue = OutputQueue()
        queue.append([1, 2, 3])
        queue.append([4, 5, 6, 7])
        queue.append([8, 9])
        queue.consume(5)   // all of the first chunk and two bytes of the second
        #expect(queue.byteCount == 4)
        var firstVector: [UInt8] = []
        _ = queue.withIOVectors { vectors, count in
            #expect(count == 2)
            firstVector = Array(UnsafeRawBufferPointer(start: vectors[0].iov_base, count: vectors[0].iov_len))
            return 0
        }
        #expect(firstVector == [6, 7])
        #expect(queue.withFirstChunk { Array($0) } == [6, 7])
        #expect(Self.drain(&queue, step: .max) == [6, 7, 8, 9])
    }

    @Test func discardUnstartedKeepsOnlyThePartlyWrittenChunk() {
        var queue = OutputQueue()
        queue.append([1, 2, 3, 4])
        queue.append([5, 6])
        queue.append([7])
        _ = Self.write(&queue, limit: 2)
        queue.discardUnstarted()
        #expect(queue.byteCount == 2)
        #expect(Self.drain(&queue, step: .max) == [3, 4])

        queue.append([8, 9])
        queue.discardUnstarted()   // nothing started: everything goes
        #expect(queue.isEmpty && queue.byteCount == 0)
        queue.append([10])
        #expect(Self.drain(&queue, step: .max) == [10])
    }

    @Test func aChunkSharedByManyQueuesIsWrittenWholeByEach() {
        let frame = Self.chunk(7, length: 4096)
        var queues = (0..<8).map { _ in OutputQueue() }
        for index in queues.indices { queues[index].append(frame) }
        for index in queues.indices {
            #expect(Self.drain(&queues[index], step: 1000 + index) == frame)
        }
        #expect(queues.allSatisfy { $0.isEmpty })
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ParlorStore

/// The threads that run blocking database work for the event loops.
@Suite struct BlockingWorkPoolTests {
    @Test func oneThreadRunsJobsInOrderOffTheCallersThreadAndStopFinishesThem() {
        let pool = BlockingWorkPool(name: "test-pool", threadCount: 1)
        let record = Recorder()
        let caller = pthread_self()
        for index in 0..<200 {
            pool.submit { record.append(index, onCaller: pthread_equal(pthread_self(), caller) != 0) }
        }
        pool.stop()
        #expect(record.values == Array(0..<200))
        #expect(record.ranOnCaller == false)
        pool.submit { record.append(-1, onCaller: false) }  // after stop: dropped, nothing left to run it
        #expect(record.values.count == 200)
    }

    @Test func threadsRunJobsAtTheSameTime() {
        let pool = BlockingWorkPool(name: "test-pool", threadCount: 2)
        defer { pool.stop() }
        let first = DispatchSemaphore(value: 0), second = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        // Each job waits for the other: only two threads at once finish them.
        pool.submit { second.signal(); if first.wait(timeout: .now() + 5) == .success { done.signal() } }
        pool.submit { first.signal(); if second.wait(timeout: .now() + 5) == .success { done.signal() } }
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(done.wait(timeout: .now() + 5) == .success)
    }

    @Test func aReadDoesNotQueueBehindAWrite() {
        let executor = DatabaseExecutor(readerCount: 1)
        defer { executor.stop() }
        let writing = DispatchSemaphore(value: 0), releaseWrite = DispatchSemaphore(value: 0), read = DispatchSemaphore(value: 0)
        executor.write { writing.signal(); releaseWrite.wait() }
        #expect(writing.wait(timeout: .now() + 5) == .success)
        executor.read { read.signal() }
        #expect(read.wait(timeout: .now() + 5) == .success, "the read waited for the write")
        releaseWrite.signal()
    }
}

private final class Recorder: @unchecked Sendable {  // values and ranOnCaller are only touched holding `lock`
    private let lock = NSLock()
    private var recorded: [Int] = []
    private var onCaller = false

    func append(_ value: Int, onCaller: Bool) {
        lock.withLock {
            recorded.append(value)
            self.onCaller = self.onCaller || onCaller
        }
    }

    var values: [Int] { lock.withLock { recorded } }
    var ranOnCaller: Bool { lock.withLock { onCaller } }
}

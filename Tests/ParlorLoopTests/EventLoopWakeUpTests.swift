import Foundation
import Synchronization
import Testing
@testable import ParlorLoop

/// `execute` writes the loop's eventfd only when the loop may be about to block: no task may be left waiting in the
/// queue of a sleeping loop, and an awake loop is not sent wake-ups it does not need.
@Suite struct EventLoopWakeUpTests {
    private func withLoop(_ body: (EventLoop) throws -> Void) throws {
        try withRunningLoop(named: "parlor-test-wake", body)
    }

    @Test func everyTaskFromManyThreadsRuns() throws {
        try withLoop { loop in
            let threads = 4, perThread = 5_000
            let ran = Atomic<Int>(0)
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                for index in 0..<perThread {
                    loop.execute {
                        if ran.add(1, ordering: .relaxed).newValue == threads * perThread { done.signal() }
                    }
                    // Gaps of every size, so the loop is caught awake, about to block, and blocked.
                    if index % (thread + 2) == 0 { usleep(UInt32(index % 7) * 20) }
                }
            }
            #expect(done.wait(timeout: .now() + 30) == .success, "\(ran.load(ordering: .relaxed)) of \(threads * perThread) tasks ran")
        }
    }

    @Test func tasksQueuedByTheAwakeLoopSendNoWakeUp() throws {
        try withLoop { loop in
            let done = DispatchSemaphore(value: 0)
            let before = Mutex<Int>(0)
            // Each task queues the next from the loop's own thread, which is awake while it does.
            @Sendable func step(_ remaining: Int) {
                if remaining == 0 { done.signal(); return }
                loop.execute { step(remaining - 1) }
            }
            loop.execute {
                before.withLock { $0 = loop.wakeUpWrites }
                step(1_000)
            }
            #expect(done.wait(timeout: .now() + 10) == .success)
            #expect(loop.wakeUpWrites == before.withLock { $0 }, "a chain of 1,000 tasks wrote the eventfd \(loop.wakeUpWrites - before.withLock { $0 }) times")
        }
    }
}

import Foundation
import Synchronization
import Testing
@testable import ParlorLoop

/// Each loop's OS thread carries the loop's name (15 bytes at most, Linux's limit), so `top -H`, `perf` and
/// /proc/PID/task/*/comm tell the rooms thread, the media thread and the connection loops apart.
@Suite struct EventLoopThreadNameTests {
    @Test func theLoopThreadIsNamedAfterItsLoop() throws {
        try withRunningLoop(named: "parlor-test-loop-with-a-long-name") { loop in
            let answer = Mutex<String?>(nil)
            let done = DispatchSemaphore(value: 0)
            loop.execute {
                let comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
                answer.withLock { $0 = comm?.trimmingCharacters(in: .newlines) }
                done.signal()
            }
            #expect(done.wait(timeout: .now() + 10) == .success)
            #expect(answer.withLock { $0 } == "parlor-test-loo")
        }
    }
}

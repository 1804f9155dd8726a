import Foundation
import Synchronization
import Testing
@testable import ParlorLoop

/// Timers with a leeway fall due at a multiple of it, so timers scheduled at different moments within one leeway
/// window run together (heartbeats batch into one wake-up); without a leeway a timer keeps its exact deadline.
@Suite struct EventLoopTimerLeewayTests {
    @Test func timersInOneWindowFireTogetherAtItsEnd() throws {
        try withRunningLoop(named: "parlor-test-leeway") { loop in try check(on: loop) }
    }

    private func check(on loop: EventLoop) throws {
        let leeway: UInt64 = 50_000_000
        let fired = Mutex<[String: UInt64]>([:])
        let done = DispatchSemaphore(value: 0)
        let windowEnd = Mutex<UInt64>(0)
        loop.execute {
            let now = MonotonicClock.now()
            // A window well ahead of now; exact deadlines at 20 %, 50 % and 80 % of it all round up to its end.
            let windowStart = (now + 2 * leeway) / leeway * leeway
            windowEnd.withLock { $0 = windowStart + leeway }
            for (name, part) in [("early", 2), ("middle", 5), ("late", 8)] {
                let delay = TimeSpan(nanoseconds: windowStart + leeway * UInt64(part) / 10 - now)
                loop.schedule(after: delay, leeway: TimeSpan(nanoseconds: leeway)) {
                    let count = fired.withLock { $0[name] = MonotonicClock.now(); return $0.count }
                    if count == 4 { done.signal() }
                }
            }
            // The control: the same delay as "early", no leeway.
            loop.schedule(after: TimeSpan(nanoseconds: windowStart + leeway * 2 / 10 - now)) {
                let count = fired.withLock { $0["exact"] = MonotonicClock.now(); return $0.count }
                if count == 4 { done.signal() }
            }
        }
        #expect(done.wait(timeout: .now() + 5) == .success)
        let times = fired.withLock { $0 }
        let end = windowEnd.withLock { $0 }
        for name in ["early", "middle", "late"] {
            #expect((times[name] ?? 0) >= end, "\(name) fired \(Int64(end) - Int64(times[name] ?? 0)) ns before the window's end")
        }
        #expect((times["exact"] ?? .max) < end, "the timer without leeway waited for the window's end")
    }
}

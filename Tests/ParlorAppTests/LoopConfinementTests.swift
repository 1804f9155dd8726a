import Testing
import ParlorLoop

/// "Loop thread only" is checked: `EventLoop.assertInLoop()` guards every loop-only entry point in debug builds.
/// A failed assertion stops the process, so these tests show the check's two halves without tripping it: the
/// condition it tests tells the threads apart, and `assert` is evaluated in the build the suite runs.
@Suite struct LoopConfinementTests {
    @Test func inEventLoopIsTrueOnlyOnTheLoopsOwnThread() throws {
        let group = try EventLoopGroup(loopCount: 2, namePrefix: "confinement")
        defer { group.shutdown() }
        let (first, second) = (group.loops[0], group.loops[1])
        #expect(!first.inEventLoop)
        let seen = first.submitAndWait { (first.inEventLoop, second.inEventLoop) }
        #expect(seen == (true, false))
    }

    @Test func assertInLoopPassesOnTheLoopAndLoopOnlyCallsWork() throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "confinement")
        defer { group.shutdown() }
        let loop = group.loops[0]
        // schedule and cancelTimer start with assertInLoop; on the loop thread they run as before.
        let cancelledAndKept = loop.submitAndWait { () -> Bool in
            loop.assertInLoop()
            let timer = loop.schedule(after: .seconds(60)) {}
            loop.cancelTimer(timer)
            return loop.inEventLoop
        }
        #expect(cancelledAndKept)
    }

    @Test func assertionsAreEvaluatedInTheBuildTheSuiteRuns() {
        // `swift test` (and so `make test`) builds debug: `assert` evaluates its condition, so assertInLoop
        // checks. In a release build the condition is never evaluated and this would be false.
        var evaluated = false
        assert({ evaluated = true; return true }())
        #expect(evaluated)
    }
}

import Foundation
import Testing
import ParlorLoop

/// "Loop thread only" is checked: `EventLoop.assertInLoop()` guards every loop-only entry point in debug builds.
/// A failed assertion stops the process, so the one call made off its loop runs in a child copy of this test runner.
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

    static let childVariable = "PARLOR_CONFINEMENT_CHILD"

    /// Runs only inside the child process below: calls a loop-only function from a thread that is not the loop's.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[childVariable] != nil))
    func offLoopScheduleInTheChild() throws {
        let loop = try EventLoop(name: "confinement-child")  // never started: no thread is its own
        loop.schedule(after: .seconds(1)) {}
        Issue.record("schedule off its loop thread returned instead of stopping the process")
    }

    // Under a sanitizer the runtime handles the child's trap itself; the plain debug suite is the proof.
    @Test(.disabled(if: ProcessInfo.processInfo.environment["PARLOR_SANITIZER"] != nil, "the child's trap under a sanitizer"))
    func aLoopOnlyCallOffTheLoopStopsADebugBuild() throws {
        let runner = Process()
        runner.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        runner.arguments = ["--testing-library", "swift-testing", "--filter", "LoopConfinementTests/offLoopScheduleInTheChild"]
        runner.environment = ProcessInfo.processInfo.environment.merging([Self.childVariable: "1"]) { $1 }
        let output = Pipe()
        runner.standardOutput = output
        runner.standardError = output
        try runner.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        runner.waitUntilExit()
        // A trap kills it with a signal; under a sanitizer the runtime catches the trap and exits non-zero instead.
        #expect(runner.terminationReason == .uncaughtSignal || runner.terminationStatus != 0, "\(text)")
        #expect(text.contains("schedule(after:_:) must run on loop confinement-child's thread"), "\(text)")
    }

    @Test func assertionsAreEvaluatedInTheBuildTheSuiteRuns() {
        // `swift test` (and so `make test`) builds debug: `assert` evaluates its condition, so assertInLoop
        // checks. In a release build the condition is never evaluated and this would be false.
        var evaluated = false
        assert({ evaluated = true; return true }())
        #expect(evaluated)
    }
}

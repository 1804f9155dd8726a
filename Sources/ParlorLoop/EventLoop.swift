#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import CParlorSystem

/// Something registered with a loop's selector: a listener or a connection.
protocol SelectorHandler: AnyObject {
    func handleSelectorEvent(readable: Bool, writable: Bool, hangUp: Bool)
}

/// One thread, one epoll selector. Every socket registered here is read, written and closed only on this thread;
/// other threads hand it work through `execute`, which queues a closure and wakes the loop through its eventfd.
public final class EventLoop: @unchecked Sendable {  // loop-thread state is confined; the task queue is behind a lock
    public let name: String
    private let selector: Selector
    private let pendingTasks = Locked<[@Sendable () -> Void]>([])
    /// The loop thread's pthread_t once `run` started, 0 before: read without a lock, since every resolve of a
    /// ConnectionHandle (one per fan-out recipient) asks `inEventLoop`.
    private let threadID = Atomic<UInt>(0)
    private let stopRequested = Atomic<Bool>(false)
    /// True from just before the loop's last look at the task queue until `epoll_wait` returns: only then does
    /// `execute` write the eventfd (see `run`).
    private let mayBlock = Atomic<Bool>(false)
    private let finished = Locked<Bool>(false)
    private let finishedCondition = NSCondition()

    // Loop-thread state.
    private var registrations: [Registration?] = []
    private var nextRegistrationID: UInt32 = 0
    var timers = TimerQueue()
    /// Log lines written during this round of events, flushed with one write(2) when the round ends (access logs
    /// would otherwise cost a system call per request).
    private var pendingLog: [UInt8] = []
    private var memoryReleaseScheduled = false
    /// Scratch space every read on this loop lands in before its handler consumes it; one per loop keeps connections small.
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    private struct Registration {
        let id: UInt32
        let handler: SelectorHandler
    }

    public init(name: String) throws(SystemError) {
        self.name = name
        selector = try Selector()
    }

    deinit { readBuffer.deallocate() }

    /// True on this loop's own thread.
    public var inEventLoop: Bool {
        let owner = threadID.load(ordering: .acquiring)
        return owner != 0 && pthread_equal(owner, pthread_self()) != 0
    }

    /// Stops a debug build when called off this loop's thread: every loop-only entry point starts with it. `assert`
    /// is compiled out of release builds, and `@inlinable` lets other modules drop the call too, so it costs nothing there.
    @inlinable
    public func assertInLoop(_ function: StaticString = #function, file: StaticString = #fileID, line: UInt = #line) {
        assert(inEventLoop, "\(function) must run on loop \(name)'s thread", file: file, line: line)
    }

    /// Starts the loop on a new thread.
    public func start() {
        let thread = Thread { [self] in self.run() }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Queues `task` to run on the loop thread; safe from any thread, including the loop's own. The eventfd is
    /// written only if the loop may be about to block: an awake loop looks at the queue before it sleeps, so the
    /// write (a system call here and a spurious `epoll_wait` round there) would buy nothing.
    public func execute(_ task: @escaping @Sendable () -> Void) {
        let wasEmpty = pendingTasks.withLock { tasks in
            tasks.append(task)
            return tasks.count == 1
        }
        guard wasEmpty else { return }
        // Pairs with the fence in `run`: whichever comes second sees the other side's write (Dekker's pattern).
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if mayBlock.load(ordering: .relaxed) { selector.wakeUp() }
    }

    /// eventfd writes sent to this loop so far (tests).
    var wakeUpWrites: Int { selector.wakeUpWrites.load(ordering: .relaxed) }

    /// Asks the loop to return from `run` after the tasks already queued; it closes nothing by itself.
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
        selector.wakeUp()
    }

    /// Blocks until the loop thread has left `run`.
    public func waitUntilStopped() {
        finishedCondition.lock()
        while !finished.withLock({ $0 }) { finishedCondition.wait() }
        finishedCondition.unlock()
    }

    func run() {
        threadID.store(pthread_self(), ordering: .releasing)
        // The OS thread name (Foundation's `Thread.name` does not set it here), so `top -H`, `perf` and /proc tell
        // the loops apart.
        _ = parlor_name_current_thread(name)
        while !stopRequested.load(ordering: .acquiring) {
            do {
                // Announce the sleep, then look at the queue: a task queued after the look finds `mayBlock` set and
                // writes the eventfd; one queued before it is found here, and the loop only polls its sockets.
                mayBlock.store(true, ordering: .relaxed)
                atomicMemoryFence(ordering: .sequentiallyConsistent)
                let idle = pendingTasks.withLock { $0.isEmpty }
                if !idle { mayBlock.store(false, ordering: .relaxed) }
                try selector.wait(blocking: idle) { event in
                    mayBlock.store(false, ordering: .relaxed)  // awake: what handlers queue needs no wake-up
                    dispatch(event)
                }
                mayBlock.store(false, ordering: .relaxed)
                if !idle { runPendingTasks() }
                flushLog()
            } catch {
                Logger().error("selector failed", ["loop": name, "error": "\(error)"])
                break
            }
        }
        runPendingTasks()
        flushLog()
        finishedCondition.lock()
        finished.withLock { $0 = true }
        finishedCondition.broadcast()
        finishedCondition.unlock()
    }

    private func dispatch(_ event: SelectorEvent) {
        switch event.source {
        case .wakeUp:
            runPendingTasks()
        case .timer:
            fireDueTimers()
        case .registration(let fd, let id):
            // A stale event for a closed fd, maybe reused since, is dropped by the id check.
            guard Int(fd) < registrations.count, let registration = registrations[Int(fd)], registration.id == id else { return }
            registration.handler.handleSelectorEvent(readable: event.readable, writable: event.writable, hangUp: event.hangUp)
        }
    }

    private func runPendingTasks() {
        // Tasks queued while these run are picked up on the next wake-up, so one busy producer cannot starve sockets.
        let tasks = pendingTasks.withLock { tasks in
            let taken = tasks
            tasks.removeAll(keepingCapacity: true)
            return taken
        }
        for task in tasks { task() }
    }

    /// A connection that held a lot of output closed: in a second, give freed memory back to the system (glibc
    /// keeps it otherwise). One release a second at most, however many connections close; loop thread only.
    public func releaseFreedMemorySoon() {
        assertInLoop()
        guard !memoryReleaseScheduled else { return }
        memoryReleaseScheduled = true
        _ = schedule(after: .seconds(1)) { [weak self] in
            self?.memoryReleaseScheduled = false
            parlor_release_free_memory()
        }
    }

    /// Queues a formatted log line for the end of this round; loop thread only.
    public func appendLog(_ write: (inout [UInt8]) -> Void) {
        assertInLoop()
        write(&pendingLog)
        if pendingLog.count > 64 * 1024 { flushLog() }
    }

    private func flushLog() {
        guard !pendingLog.isEmpty else { return }
        _ = pendingLog.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
        pendingLog.removeAll(keepingCapacity: pendingLog.count <= 64 * 1024)
    }

    // MARK: Registrations (loop thread only)

    func register(fd: Int32, interest: Interest, handler: SelectorHandler) throws(SystemError) -> UInt32 {
        precondition(inEventLoop, "register must run on the loop thread")
        nextRegistrationID &+= 1
        let id = nextRegistrationID
        try selector.register(fd: fd, id: id, interest: interest)
        if Int(fd) >= registrations.count {
            registrations.append(contentsOf: repeatElement(nil, count: Int(fd) - registrations.count + 1))
        }
        registrations[Int(fd)] = Registration(id: id, handler: handler)
        return id
    }

    func reregister(fd: Int32, id: UInt32, interest: Interest) {
        assertInLoop()
        try? selector.reregister(fd: fd, id: id, interest: interest)
    }

    /// Removes the registration; call before closing the fd.
    func deregister(fd: Int32, id: UInt32) {
        assertInLoop()
        guard Int(fd) < registrations.count, registrations[Int(fd)]?.id == id else { return }
        selector.deregister(fd: fd)
        registrations[Int(fd)] = nil
    }

    /// The live connection registered under (fd, id), if it is still the same one.
    func connection(fd: Int32, id: UInt32) -> Connection? {
        assertInLoop()
        guard Int(fd) < registrations.count, let registration = registrations[Int(fd)], registration.id == id else { return nil }
        return registration.handler as? Connection
    }

    func handler(fd: Int32) -> SelectorHandler? {
        assertInLoop()
        return Int(fd) < registrations.count ? registrations[Int(fd)]?.handler : nil
    }

    /// All live connections on this loop (for shutdown).
    func allConnections() -> [Connection] {
        assertInLoop()
        return registrations.compactMap { $0?.handler as? Connection }
    }

    // MARK: Timers (loop thread only)

    /// Runs `body` on this loop after `delay`. Cancel with `cancelTimer`.
    @discardableResult
    public func schedule(after delay: TimeSpan, _ body: @escaping () -> Void) -> TimerID {
        assertInLoop()  // here too, so a failure names the call that was made
        return schedule(after: delay, leeway: TimeSpan(nanoseconds: 0), body)
    }

    /// Runs `body` on this loop after `delay`, or up to `leeway` later: the deadline is rounded up to a multiple of
    /// `leeway`, so timers that need not be exact (heartbeats on thousands of connections) fall due together and
    /// run in one wake-up of the loop rather than one wake-up each.
    @discardableResult
    public func schedule(after delay: TimeSpan, leeway: TimeSpan, _ body: @escaping () -> Void) -> TimerID {
        assertInLoop()
        let exact = MonotonicClock.now() &+ delay.nanoseconds  // a zero leeway keeps this exact deadline
        let step = leeway.nanoseconds
        let deadline = step > 1 ? (exact + step - 1) / step * step : exact
        let (id, earliestChanged) = timers.add(deadline: deadline, body)
        if earliestChanged { selector.armTimer(at: timers.earliestDeadline) }
        return id
    }

    public func cancelTimer(_ id: TimerID) {
        assertInLoop()
        timers.cancel(id)
    }

    private func fireDueTimers() {
        let now = MonotonicClock.now()
        while let body = timers.popDue(now: now) { body() }
        selector.armTimer(at: timers.earliestDeadline)
    }
}

import Foundation

/// A fixed set of threads running closures from a locked queue, first in first out: the place for work that
/// blocks (a database call), which must never run on an event loop. Threads are made once, at init; a job costs
/// one closure and a wake-up, never a thread.
public final class BlockingWorkPool: @unchecked Sendable {  // jobs, head, isStopped and running are only touched holding `condition`
    public typealias Job = @Sendable () -> Void

    private let condition = NSCondition()
    /// Queued jobs from `head` on; emptied (capacity kept) whenever the threads have taken them all.
    private var jobs: [Job] = []
    private var head = 0
    private var isStopped = false
    /// Threads not yet ended.
    private var running: Int

    /// Starts `threadCount` threads (at least one) named `name`, or `name-0`, `name-1`, … when there are several
    /// (the kernel keeps 15 bytes of a thread's name, which `top -H`, perf and /proc show).
    public init(name: String, threadCount: Int) {
        let count = max(1, threadCount)
        running = count
        for index in 0..<count {
            Thread.named(count == 1 ? name : "\(name)-\(index)") { [self] in self.run() }.start()
        }
    }

    /// Queues `job` for the next idle thread. Jobs submitted after `stop` are dropped: nothing is left to run them.
    public func submit(_ job: @escaping Job) {
        condition.lock()
        defer { condition.unlock() }
        guard !isStopped else { return }
        jobs.append(job)
        condition.signal()
    }

    /// Lets the threads finish the jobs already queued, then waits for them to end. Idempotent.
    public func stop() {
        condition.lock()
        defer { condition.unlock() }
        isStopped = true
        condition.broadcast()
        // Safe to wait on the same condition: once stopped, nothing signals it but the threads as they end.
        while running > 0 { condition.wait() }
    }

    private func run() {
        condition.lock()
        while true {
            if head < jobs.count {
                let job = jobs[head]
                head += 1
                if head == jobs.count {
                    jobs.removeAll(keepingCapacity: true)
                    head = 0
                }
                condition.unlock()
                job()
                condition.lock()
            } else if isStopped {
                break
            } else {
                condition.wait()
            }
        }
        running -= 1
        condition.broadcast()
        condition.unlock()
    }
}

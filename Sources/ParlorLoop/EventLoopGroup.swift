import Foundation
import Synchronization
import CParlorSystem

/// A fixed set of loops, one thread each; by default one per core.
public final class EventLoopGroup: Sendable {
    public let loops: [EventLoop]
    private let nextIndex = Atomic<Int>(0)

    public init(loopCount: Int = ProcessInfo.processInfo.activeProcessorCount, namePrefix: String = "parlor-loop") throws(SystemError) {
        var loops: [EventLoop] = []
        for index in 0..<max(1, loopCount) {
            loops.append(try EventLoop(name: "\(namePrefix)-\(index)"))
        }
        self.loops = loops
        for loop in loops { loop.start() }
    }

    /// Loops in turn, for work that is not tied to a connection.
    public func next() -> EventLoop {
        let index = nextIndex.add(1, ordering: .relaxed).oldValue
        return loops[index % loops.count]
    }

    /// Stops every loop and waits for their threads to leave.
    public func shutdown() {
        for loop in loops { loop.stop() }
        for loop in loops { loop.waitUntilStopped() }
    }
}

extension EventLoop {
    /// Runs `body` on the loop and waits for its result; for setup and shutdown, never from the loop itself.
    public func submitAndWait<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        precondition(!inEventLoop, "submitAndWait would deadlock on the loop's own thread")
        let result = Locked<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        execute {
            let value = body()
            result.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }

    /// Connections currently open on this loop; loop thread only.
    public func openConnections() -> [Connection] {
        allConnections().filter(\.isOpen)
    }
}

/// Process-wide settings a socket server needs before it starts.
public enum ProcessSetup {
    /// Ignores SIGPIPE (writes use MSG_NOSIGNAL semantics through this) and raises the soft descriptor limit
    /// to the hard one; returns the new limit, or nil when it could not be read.
    @discardableResult
    public static func prepareForServing() -> Int? {
        parlor_ignore_sigpipe()
        let limit = parlor_raise_nofile_limit()
        return limit >= 0 ? Int(limit) : nil
    }
}

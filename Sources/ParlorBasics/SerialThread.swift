/// Identifies a scheduled timer so it can be cancelled.
public struct TimerID: Hashable, Sendable {
    public let value: UInt64
    public init(value: UInt64) { self.value = value }
}

/// A thread that runs tasks and timers one at a time, in the order queued: the shape the rooms domain runs on
/// without knowing what else the thread does (ParlorLoop's `EventLoop` is one, and the server's rooms thread).
public protocol SerialThread: AnyObject, Sendable {
    /// True on the thread itself: confinement checks (`assert`) ask it.
    var isCurrent: Bool { get }
    func start()
    /// Runs `task` on the thread, after what was queued before it.
    func execute(_ task: @escaping @Sendable () -> Void)
    /// Runs `body` on the thread and waits for its result; never from the thread itself.
    func submitAndWait<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T
    /// Runs `body` on the thread once `delay` has passed (never earlier).
    func schedule(after delay: TimeSpan, _ body: @escaping () -> Void) -> TimerID
    func cancelTimer(_ id: TimerID)
    func stop()
    func waitUntilStopped()
}

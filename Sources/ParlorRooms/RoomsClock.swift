import ParlorBasics

/// Wall-clock time and timers as the rooms domain sees them (grace periods, ttl expiry, session expiry, retries).
/// Used on the rooms thread only, and timers fire there. Production uses `ThreadClock`; tests a manual clock whose
/// timers fire when the test advances it.
public protocol RoomsClock: AnyObject {
    /// Unix milliseconds.
    func now() -> Int64
    func schedule(after delay: TimeSpan, _ body: @escaping () -> Void) -> RoomsTimer
    func cancel(_ timer: RoomsTimer)
}

/// A timer armed on a `RoomsClock`, to cancel it.
public struct RoomsTimer: Hashable, Sendable {
    let threadTimer: TimerID?
    /// What another clock numbers its timers by.
    public let number: UInt64

    public init(number: UInt64) {
        threadTimer = nil
        self.number = number
    }

    init(_ timer: TimerID) {
        threadTimer = timer
        number = 0
    }
}

/// The real clock and the rooms thread's timers.
final class ThreadClock: RoomsClock {
    private let thread: any SerialThread

    init(thread: any SerialThread) { self.thread = thread }

    func now() -> Int64 { Timestamp.nowMilliseconds() }

    func schedule(after delay: TimeSpan, _ body: @escaping () -> Void) -> RoomsTimer {
        RoomsTimer(thread.schedule(after: delay, body))
    }

    func cancel(_ timer: RoomsTimer) {
        if let id = timer.threadTimer { thread.cancelTimer(id) }
    }
}

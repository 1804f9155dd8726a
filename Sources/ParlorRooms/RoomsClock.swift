import ParlorLoop

/// Wall-clock time and timers as the rooms domain sees them (grace periods, ttl expiry, session expiry, retries).
/// Used on the rooms thread only, and timers fire there. Production uses `LoopClock`; tests a manual clock whose
/// timers fire when the test advances it.
public protocol RoomsClock: AnyObject {
    /// Unix milliseconds.
    func now() -> Int64
    func schedule(after delay: TimeSpan, _ body: @escaping () -> Void) -> RoomsTimer
    func cancel(_ timer: RoomsTimer)
}

/// A timer armed on a `RoomsClock`, to cancel it.
public struct RoomsTimer: Hashable, Sendable {
    let loopTimer: TimerID?
    /// What another clock numbers its timers by.
    public let number: UInt64

    public init(number: UInt64) {
        loopTimer = nil
        self.number = number
    }

    init(_ timer: TimerID) {
        loopTimer = timer
        number = 0
    }
}

/// The real clock and the rooms loop's timers.
final class LoopClock: RoomsClock {
    private let loop: EventLoop

    init(loop: EventLoop) { self.loop = loop }

    func now() -> Int64 { Timestamp.nowMilliseconds() }

    func schedule(after delay: TimeSpan, _ body: @escaping () -> Void) -> RoomsTimer {
        RoomsTimer(loop.schedule(after: delay, body))
    }

    func cancel(_ timer: RoomsTimer) {
        if let id = timer.loopTimer { loop.cancelTimer(id) }
    }
}

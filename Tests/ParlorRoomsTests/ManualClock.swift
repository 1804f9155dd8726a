import ParlorBasics
import ParlorRooms

/// Wall-clock time that moves only when the test advances it; its timers fire then, in due order, on the rooms thread.
final class ManualClock: RoomsClock, @unchecked Sendable {  // touched on the rooms thread only (tests reach it through submitAndWait)
    private var current: Int64
    private var timers: [(due: Int64, number: UInt64, body: () -> Void)] = []
    private var lastNumber: UInt64 = 0

    init(start: Int64 = 1_800_000_000_000) {
        current = start
    }

    func now() -> Int64 { current }

    func schedule(after delay: TimeSpan, _ body: @escaping () -> Void) -> RoomsTimer {
        lastNumber += 1
        timers.append((current + Int64(delay.nanoseconds / 1_000_000), lastNumber, body))
        return RoomsTimer(number: lastNumber)
    }

    func cancel(_ timer: RoomsTimer) {
        timers.removeAll { $0.number == timer.number }
    }

    /// Moves to the earliest timer due at or before `target` and fires it; false when none is left (then the clock
    /// stands at `target`).
    func fireNext(upTo target: Int64) -> Bool {
        guard let next = timers.filter({ $0.due <= target }).min(by: { ($0.due, $0.number) < ($1.due, $1.number) }) else {
            current = max(current, target)
            return false
        }
        timers.removeAll { $0.number == next.number }
        current = max(current, next.due)
        next.body()
        return true
    }

    /// Timers armed and not yet fired or cancelled.
    var pendingTimers: Int { timers.count }
}

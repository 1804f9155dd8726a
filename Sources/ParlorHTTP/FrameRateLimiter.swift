import ParlorLoop

/// A token bucket over a WebSocket's incoming frames: `rate` a second, up to `2 × rate` at once.
struct FrameRateLimiter {
    private let rate: Double
    private var tokens: Double
    private var updatedAt: UInt64

    /// `rate` 0 allows everything.
    init(rate: Double, now: UInt64 = MonotonicClock.now()) {
        self.rate = rate
        tokens = 2 * rate
        updatedAt = now
    }

    /// Takes `count` tokens; false when there are not that many (the peer is over its rate).
    mutating func take(_ count: Int, now: UInt64 = MonotonicClock.now()) -> Bool {
        guard rate > 0, count > 0 else { return true }
        tokens = min(2 * rate, tokens + Double(now &- updatedAt) / 1e9 * rate)
        updatedAt = now
        tokens -= Double(count)
        return tokens >= 0
    }
}

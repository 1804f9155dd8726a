import ParlorLoop

/// A token bucket: `rate` tokens a second up to `burst`; each action takes one.
struct TokenBucket {
    let rate: Double
    let burst: Double
    private var tokens: Double
    private var updatedAt: UInt64

    init(rate: Double, burst: Double, now: UInt64 = MonotonicClock.now()) {
        self.rate = rate
        self.burst = burst
        tokens = burst
        updatedAt = now
    }

    /// Takes a token if there is one; otherwise returns the seconds until there will be.
    mutating func take(now: UInt64 = MonotonicClock.now()) -> Double? {
        tokens = min(burst, tokens + Double(now &- updatedAt) / 1e9 * rate)
        updatedAt = now
        if tokens >= 1 {
            tokens -= 1
            return nil
        }
        return (1 - tokens) / rate
    }

    func isFull(now: UInt64) -> Bool { tokens + Double(now &- updatedAt) / 1e9 * rate >= burst }
}

/// Token buckets per client address, shared by every loop (POST /auth rate limiting).
final class AddressRateLimiter: Sendable {
    private let rate: Double
    private let burst: Double
    private let buckets = Locked<[String: TokenBucket]>([:])

    init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
    }

    /// nil when allowed; otherwise the whole seconds to wait (for Retry-After).
    func check(_ address: String) -> Int? {
        let now = MonotonicClock.now()
        return buckets.withLock { buckets in
            // Forget full buckets now and then so the table stays as small as the set of recent clients.
            if buckets.count > 10_000 { buckets = buckets.filter { !$0.value.isFull(now: now) } }
            var bucket = buckets[address] ?? TokenBucket(rate: rate, burst: burst, now: now)
            let wait = bucket.take(now: now)
            buckets[address] = bucket
            return wait.map { max(1, Int($0.rounded(.up))) }
        }
    }
}

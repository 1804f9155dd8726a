/// A token bucket in rooms-clock milliseconds: `rate` tokens a second up to `burst`.
struct OfferBucket {
    private var tokens: Double
    private var updatedAt: Int64

    init(burst: Double, now: Int64) {
        tokens = burst
        updatedAt = now
    }

    mutating func take(rate: Double, burst: Double, now: Int64) -> Bool {
        tokens = min(burst, tokens + Double(max(0, now - updatedAt)) / 1000 * rate)
        updatedAt = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}

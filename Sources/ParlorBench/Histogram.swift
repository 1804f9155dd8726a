/// Latency samples as mergeable buckets: several generator processes' histograms are summed and the percentiles
/// taken over the sum (a p99 of p99s would be wrong). A bucket is its upper bound in microseconds, rounded up to three
/// significant digits, so a percentile read from it is at most 1 % above the sample's value.
enum Histogram {
    static func bucketMicroseconds(_ nanoseconds: Int64) -> Int64 {
        var value = max(0, (nanoseconds + 999) / 1000), scale: Int64 = 1
        while value >= 1000 {
            value = (value + 9) / 10
            scale *= 10
        }
        return value * scale
    }

    /// `[[upper bound µs, count], …]` in ascending order.
    static func buckets(_ samples: [Int64]) -> [[Int64]] {
        var counts: [Int64: Int64] = [:]
        for sample in samples { counts[bucketMicroseconds(sample), default: 0] += 1 }
        return counts.keys.sorted().map { [$0, counts[$0]!] }
    }
}

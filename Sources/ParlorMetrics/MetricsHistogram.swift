/// A Prometheus histogram of durations: one atomic counter per bucket and one for the sum, so observing takes no
/// lock from any thread.
public final class MetricsHistogram: Sendable {
    /// Seconds: from half a millisecond (an in-memory batch) to 5 s (a disk that stalls).
    public static let latencyBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

    public let upperBounds: [Double]
    private let boundsInNanoseconds: [UInt64]
    /// Per bucket, not cumulative; the last cell is everything above the highest bound.
    private let counts: [MetricCell]
    private let sumNanoseconds = MetricCell()

    public init(upperBounds: [Double] = MetricsHistogram.latencyBuckets) {
        self.upperBounds = upperBounds
        boundsInNanoseconds = upperBounds.map { UInt64($0 * 1e9) }
        counts = (0...upperBounds.count).map { _ in MetricCell() }
    }

    public func observe(nanoseconds: UInt64) {
        var index = 0
        while index < boundsInNanoseconds.count, nanoseconds > boundsInNanoseconds[index] { index += 1 }
        counts[index].add()
        sumNanoseconds.add(Int(clamping: nanoseconds))
    }

    /// Cumulative bucket counts (the last is `+Inf`, equal to the count) and the sum in seconds. Each bucket is read
    /// once, so `+Inf` and `_count` always agree even while other threads observe.
    public func snapshot() -> (cumulative: [Int], sumSeconds: Double) {
        var running = 0
        let cumulative = counts.map { cell in
            running += cell.load()
            return running
        }
        return (cumulative, Double(sumNanoseconds.load()) / 1e9)
    }
}

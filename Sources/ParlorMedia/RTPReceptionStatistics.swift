/// What a receiver counts of one RTP source to fill a report block (RFC 3550 appendix A.1, A.3, A.8): the highest
/// extended sequence number, packets received and expected, interarrival jitter, and the last SR heard.
public struct RTPReceptionStatistics: Sendable {
    public let ssrc: UInt32
    public let clockRate: UInt32
    private var baseSequence: UInt32 = 0
    private var maxSequence: UInt16 = 0
    private var cycles: UInt32 = 0
    private var received: UInt32 = 0
    private var expectedPrior: UInt32 = 0
    private var receivedPrior: UInt32 = 0
    private var started = false
    private var jitter: Double = 0
    private var lastTransit: Int64?
    private var lastSenderReport: UInt32 = 0
    private var lastSenderReportAt: UInt64?

    public init(ssrc: UInt32, clockRate: UInt32 = 48000) {
        self.ssrc = ssrc
        self.clockRate = clockRate
    }

    /// One packet arrived at `arrival` (monotonic nanoseconds).
    public mutating func record(sequence: UInt16, timestamp: UInt32, arrival: UInt64) {
        if !started {
            started = true
            baseSequence = UInt32(sequence)
            maxSequence = sequence
        } else {
            let delta = sequence &- maxSequence
            if delta != 0, delta < 0x8000 {  // newer (with wrap-around)
                if sequence < maxSequence { cycles &+= 1 << 16 }
                maxSequence = sequence
            }
        }
        received &+= 1
        // Jitter: the smoothed difference of transit times, in timestamp units (A.8).
        let arrivalUnits = Int64(truncatingIfNeeded: arrival / 1000 * UInt64(clockRate) / 1_000_000)
        let transit = arrivalUnits &- Int64(timestamp)
        if let lastTransit {
            let difference = Double(abs(transit &- lastTransit))
            jitter += (difference - jitter) / 16
        }
        lastTransit = transit
    }

    /// A sender report from this source arrived at `arrival`.
    public mutating func record(_ report: SenderReport, arrival: UInt64) {
        lastSenderReport = report.compactNTP
        lastSenderReportAt = arrival
    }

    public var extendedHighestSequence: UInt32 { cycles | UInt32(maxSequence) }

    /// The report block as of `now`; starts a new interval for the fraction lost.
    public mutating func reportBlock(now: UInt64) -> ReportBlock {
        let expected = started ? extendedHighestSequence &- baseSequence &+ 1 : 0
        let lost = Int64(expected) - Int64(received)
        let expectedInterval = expected &- expectedPrior
        let receivedInterval = received &- receivedPrior
        expectedPrior = expected
        receivedPrior = received
        let lostInterval = Int64(expectedInterval) - Int64(receivedInterval)
        let fraction = expectedInterval == 0 || lostInterval <= 0 ? 0 : UInt8(min(255, (lostInterval << 8) / Int64(expectedInterval)))
        var delay: UInt32 = 0
        if let at = lastSenderReportAt, now >= at {
            delay = UInt32(truncatingIfNeeded: (now - at) / 1000 * 65536 / 1_000_000)
        }
        return ReportBlock(ssrc: ssrc, fractionLost: fraction, cumulativeLost: Int32(max(-0x80_0000, min(0x7F_FFFF, lost))),
                           extendedHighestSequence: extendedHighestSequence, jitter: UInt32(jitter),
                           lastSenderReport: lastSenderReport, delaySinceLastSenderReport: delay)
    }
}

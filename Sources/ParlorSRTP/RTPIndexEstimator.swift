/// The rollover counter (ROC) and highest sequence number of one RTP stream, and the packet index estimate of
/// RFC 3711 §3.3.1 and Appendix A: a sequence number is read as the one of the three candidate indices (previous,
/// this or next roll-over) closest to the highest index seen so far.
///
/// The estimate is made before the packet is authenticated (the MAC covers the ROC); only `accept` moves the state,
/// after the packet passed, so a forged sequence number cannot push the counter ahead.
struct RTPIndexEstimator: Equatable {
    private(set) var rolloverCounter: UInt32
    private(set) var highestSequence: UInt16

    /// A stream starts with ROC 0 at its first packet's sequence number (RFC 3711 §3.3.1).
    init(firstSequence: UInt16) {
        rolloverCounter = 0
        highestSequence = firstSequence
    }

    /// The highest index accepted: ROC · 2^16 + highest sequence number.
    var highestIndex: UInt64 { UInt64(rolloverCounter) << 16 | UInt64(highestSequence) }

    /// The 48-bit index `sequence` most likely has; nil when that would be before index 0 (a sequence number from
    /// "before" the first roll-over of a stream whose ROC is 0) or past 2^48 - 1.
    func estimate(sequence: UInt16) -> UInt64? {
        let rollover = Int64(rolloverCounter), highest = Int(highestSequence), received = Int(sequence)
        let guess: Int64
        if highest < 32768 {
            guess = received - highest > 32768 ? rollover - 1 : rollover
        } else {
            guess = highest - 32768 > received ? rollover + 1 : rollover
        }
        guard guess >= 0, guess <= Int64(UInt32.max) else { return nil }
        return UInt64(guess) << 16 | UInt64(sequence)
    }

    /// Records an authenticated packet's index: moves ROC and the highest sequence number forward, never back.
    mutating func accept(index: UInt64) {
        guard index > highestIndex else { return }
        rolloverCounter = UInt32(truncatingIfNeeded: index >> 16)
        highestSequence = UInt16(truncatingIfNeeded: index)
    }
}

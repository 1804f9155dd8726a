/// Whether a sender is speaking, from the RFC 6464 audio level its packets carry, with hysteresis: speaking starts
/// once the level has stayed above the threshold for `onAfter`, and ends once it has stayed below (or no packet
/// came) for `offAfter`. A plain value driven by packets and a clock (monotonic nanoseconds).
public struct SpeakingDetector: Sendable {
    /// Louder than this many dB below overload counts as voice (RFC 6464 levels: 0 loudest, 127 silence).
    public var threshold: UInt8 = 50
    public var onAfter: UInt64 = 100_000_000
    public var offAfter: UInt64 = 500_000_000
    public private(set) var isSpeaking = false
    /// When the current run of loud packets began; nil while quiet.
    private var loudSince: UInt64?
    private(set) public var lastLoudAt: UInt64 = 0

    public init() {}

    /// One packet's level at `now`; returns the new state when it changed.
    public mutating func record(level: UInt8, now: UInt64) -> Bool? {
        if level < threshold {
            if loudSince == nil { loudSince = now }
            lastLoudAt = now
            if !isSpeaking, let since = loudSince, now &- since >= onAfter {
                isSpeaking = true
                return true
            }
            return nil
        }
        loudSince = nil
        return check(now: now)
    }

    /// Ends speaking once nothing loud came for `offAfter` (also when packets stopped); returns false when it ended.
    public mutating func check(now: UInt64) -> Bool? {
        guard isSpeaking, now >= lastLoudAt, now - lastLoudAt >= offAfter else { return nil }
        isSpeaking = false
        loudSince = nil
        return false
    }

    /// Forgets everything (the sender was muted or stopped): returns false if it was speaking.
    public mutating func reset() -> Bool? {
        loudSince = nil
        guard isSpeaking else { return nil }
        isSpeaking = false
        return false
    }
}

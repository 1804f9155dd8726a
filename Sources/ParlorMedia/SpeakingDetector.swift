/// Whether a sender is speaking, from the RFC 6464 audio level its packets carry, with hysteresis: speaking starts
/// once the level has stayed above the threshold for `onAfter` of the sender's audio, and ends once nothing loud
/// has arrived (or no packet came) for `offAfter`. A loud run is measured on the packets' RTP timestamps, not on
/// when they arrived: a busy sender or network hands over 100 ms of audio in a burst of a few milliseconds, which
/// by arrival would never count as speech. The end is measured on arrival (monotonic nanoseconds), so a sender
/// that stops sending stops speaking. A plain value driven by packets and a clock.
public struct SpeakingDetector: Sendable {
    /// Louder than this many dB below overload counts as voice (RFC 6464 levels: 0 loudest, 127 silence).
    public var threshold: UInt8 = 50
    public var onAfter: UInt64 = 100_000_000
    public var offAfter: UInt64 = 500_000_000
    /// The RTP clock of the audio (Opus: 48 kHz).
    public var clockRate: UInt32 = 48_000
    public private(set) var isSpeaking = false
    /// RTP timestamps of the current loud run's first and newest packets; nil while quiet.
    private var loudRun: (first: UInt32, newest: UInt32)?
    private(set) public var lastLoudAt: UInt64 = 0

    public init() {}

    /// One packet's level, its RTP timestamp and its arrival at `now`; returns the new state when it changed.
    public mutating func record(level: UInt8, timestamp: UInt32, now: UInt64) -> Bool? {
        guard level < threshold else {
            loudRun = nil
            return check(now: now)
        }
        lastLoudAt = now
        if var run = loudRun {
            let step = timestamp &- run.newest
            if step >= 1 << 31 {
                // Older than the newest (reordered): it neither lengthens nor breaks the run.
            } else if step > clockRate / 2 {
                run = (timestamp, timestamp)  // half a second of audio missing: a new run
            } else {
                run.newest = timestamp
            }
            loudRun = run
        } else {
            loudRun = (timestamp, timestamp)
        }
        guard !isSpeaking, let run = loudRun,
              UInt64(run.newest &- run.first) * 1_000_000_000 >= onAfter * UInt64(clockRate) else { return nil }
        isSpeaking = true
        return true
    }

    /// Ends speaking once nothing loud came for `offAfter` (also when packets stopped); returns false when it ended.
    public mutating func check(now: UInt64) -> Bool? {
        guard isSpeaking, now >= lastLoudAt, now - lastLoudAt >= offAfter else { return nil }
        isSpeaking = false
        loudRun = nil
        return false
    }

    /// Forgets everything (the sender was muted or stopped): returns false if it was speaking.
    public mutating func reset() -> Bool? {
        loudRun = nil
        guard isSpeaking else { return nil }
        isSpeaking = false
        return false
    }
}

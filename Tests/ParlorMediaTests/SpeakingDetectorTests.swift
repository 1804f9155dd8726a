import Testing
@testable import ParlorMedia

/// Speaking from RFC 6464 levels with hysteresis, on a clock the test drives (nanoseconds).
@Suite struct SpeakingDetectorTests {
    static let ms: UInt64 = 1_000_000

    @Test func speakingStartsAfterAHundredMillisecondsLoudAndEndsAfterHalfASecondQuiet() {
        var detector = SpeakingDetector()
        var changes: [Bool] = []
        for step in UInt64(0)...5 {  // 100 ms of loud packets, 20 ms apart
            if let change = detector.record(level: 30, now: 1000 * Self.ms + step * 20 * Self.ms) { changes.append(change) }
        }
        #expect(changes == [true])
        #expect(detector.isSpeaking)
        // A short pause does not end it; half a second of quiet does.
        #expect(detector.record(level: 120, now: 1200 * Self.ms) == nil)
        #expect(detector.check(now: 1500 * Self.ms) == nil)
        #expect(detector.record(level: 120, now: 1601 * Self.ms) == false)
        #expect(!detector.isSpeaking)
    }

    @Test func aClickIsNotSpeechAndSilenceEndsByTheClockAlone() {
        var detector = SpeakingDetector()
        #expect(detector.record(level: 10, now: 0) == nil)
        #expect(detector.record(level: 127, now: 20 * Self.ms) == nil)
        #expect(detector.record(level: 10, now: 40 * Self.ms) == nil)
        #expect(detector.record(level: 10, now: 120 * Self.ms) == nil)  // 80 ms since this run began
        #expect(detector.record(level: 10, now: 140 * Self.ms) == true)
        // No packets at all (a muted or gone sender): the periodic check ends it.
        #expect(detector.check(now: 600 * Self.ms) == nil)
        #expect(detector.check(now: 640 * Self.ms) == false)
        #expect(detector.reset() == nil)
    }

    @Test func resetEndsSpeakingAtOnce() {
        var detector = SpeakingDetector()
        _ = detector.record(level: 0, now: 0)
        #expect(detector.record(level: 0, now: 100 * Self.ms) == true)
        #expect(detector.reset() == false)
        #expect(!detector.isSpeaking)
        #expect(detector.record(level: 0, now: 150 * Self.ms) == nil, "a new run starts from the reset")
    }
}

import Testing
@testable import ParlorMedia

/// Speaking from RFC 6464 levels with hysteresis. A packet is given at a time in milliseconds: its RTP timestamp is
/// that time on the 48 kHz clock and it arrives then (`at`), unless a test makes it arrive at another time.
@Suite struct SpeakingDetectorTests {
    static let ms: UInt64 = 1_000_000

    /// One packet of audio sampled at `sampled` ms that arrives at `arrives` ms (by default when it was sampled).
    private func packet(_ detector: inout SpeakingDetector, level: UInt8, sampled: UInt64, arrives: UInt64? = nil) -> Bool? {
        detector.record(level: level, timestamp: UInt32(truncatingIfNeeded: sampled * 48), now: (arrives ?? sampled) * Self.ms)
    }

    @Test func speakingStartsAfterAHundredMillisecondsLoudAndEndsAfterHalfASecondQuiet() {
        var detector = SpeakingDetector()
        var changes: [Bool] = []
        for step in UInt64(0)...5 {  // 100 ms of loud packets, 20 ms apart
            if let change = packet(&detector, level: 30, sampled: 1000 + step * 20) { changes.append(change) }
        }
        #expect(changes == [true])
        #expect(detector.isSpeaking)
        // A short pause does not end it; half a second of quiet does.
        #expect(packet(&detector, level: 120, sampled: 1200) == nil)
        #expect(detector.check(now: 1500 * Self.ms) == nil)
        #expect(packet(&detector, level: 120, sampled: 1601) == false)
        #expect(!detector.isSpeaking)
    }

    @Test func aClickIsNotSpeechAndSilenceEndsByTheClockAlone() {
        var detector = SpeakingDetector()
        #expect(packet(&detector, level: 10, sampled: 0) == nil)
        #expect(packet(&detector, level: 127, sampled: 20) == nil)
        #expect(packet(&detector, level: 10, sampled: 40) == nil)
        #expect(packet(&detector, level: 10, sampled: 120) == nil)  // 80 ms since this run began
        #expect(packet(&detector, level: 10, sampled: 140) == true)
        // No packets at all (a muted or gone sender): the periodic check ends it.
        #expect(detector.check(now: 600 * Self.ms) == nil)
        #expect(detector.check(now: 640 * Self.ms) == false)
        #expect(detector.reset() == nil)
    }

    @Test func resetEndsSpeakingAtOnce() {
        var detector = SpeakingDetector()
        _ = packet(&detector, level: 0, sampled: 0)
        #expect(packet(&detector, level: 0, sampled: 100) == true)
        #expect(detector.reset() == false)
        #expect(!detector.isSpeaking)
        #expect(packet(&detector, level: 0, sampled: 150) == nil, "a new run starts from the reset")
    }

    /// A busy sender (or network) delivers 100 ms of loud audio within 5 ms: by arrival that is a click, by the audio's
    /// own clock it is speech. (Measured by arrival, a loaded machine in the browser tests never lit the ring.)
    @Test func aBurstOfLoudAudioCountsItsLengthNotItsArrival() {
        var detector = SpeakingDetector()
        var changes: [Bool] = []
        for step in UInt64(0)...5 {
            if let change = packet(&detector, level: 20, sampled: 2000 + step * 20, arrives: 3000 + step) { changes.append(change) }
        }
        #expect(changes == [true])
        // And the end is still measured on arrival: quiet packets 400 ms after the burst do not end it, 500 ms do.
        #expect(packet(&detector, level: 127, sampled: 2120, arrives: 3405) == nil)
        #expect(packet(&detector, level: 127, sampled: 2140, arrives: 3505) == false)
    }

    @Test func aLatePacketNeitherLengthensNorBreaksARunAndAGapStartsANewOne() {
        var detector = SpeakingDetector()
        #expect(packet(&detector, level: 20, sampled: 1000) == nil)
        #expect(packet(&detector, level: 20, sampled: 1060) == nil)
        // A packet sampled long before the run began arrives late: ignored for the run's length.
        #expect(packet(&detector, level: 20, sampled: 200, arrives: 1070) == nil)
        #expect(packet(&detector, level: 20, sampled: 1100) == true, "100 ms since 1000, the late packet notwithstanding")
        // After 600 ms of audio missing (no packets), a loud packet starts a new run rather than continuing this one.
        #expect(detector.reset() == false)
        #expect(packet(&detector, level: 20, sampled: 2000) == nil)
        #expect(packet(&detector, level: 20, sampled: 2600) == nil, "a jump of 600 ms is a new run, not 600 ms of speech")
        #expect(packet(&detector, level: 20, sampled: 2700) == true)
    }

    @Test func theRunIsMeasuredAcrossTheTimestampsWrapAround() {
        var detector = SpeakingDetector()
        let start = UInt32.max - 2_000  // 2,001 samples before the 32-bit timestamp wraps
        #expect(detector.record(level: 20, timestamp: start, now: 0) == nil)
        #expect(detector.record(level: 20, timestamp: start &+ 2_400, now: 50 * Self.ms) == nil)
        #expect(detector.record(level: 20, timestamp: start &+ 4_800, now: 100 * Self.ms) == true)
    }
}

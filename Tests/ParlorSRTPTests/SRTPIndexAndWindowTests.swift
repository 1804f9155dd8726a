import Testing
@testable import ParlorSRTP

/// The index estimate of RFC 3711 Appendix A and the 128-packet replay window, on their own.
@Suite struct SRTPIndexAndWindowTests {
    /// "No index": the estimate compared as a plain UInt64, since swift-testing's comparison of a `UInt64?` under a
    /// comment trips AddressSanitizer in the runtime's AnyHashable conversion (a read of 9 bytes from an 8-byte slot).
    static let none = UInt64.max

    func index(_ estimator: RTPIndexEstimator, _ sequence: UInt16) -> UInt64 {
        estimator.estimate(sequence: sequence) ?? Self.none
    }

    @Test func theEstimateTakesTheRollOverClosestToTheHighestIndex() {
        var estimator = RTPIndexEstimator(firstSequence: 65530)
        #expect(index(estimator, 65531) == 65531)
        #expect(index(estimator, 2) == 65536 + 2, "just past 65535: the next roll-over")
        #expect(index(estimator, 30000) == 65536 + 30000, "35530 behind or 30006 ahead: ahead is closer")
        #expect(index(estimator, 40000) == 40000, "25530 behind: the same roll-over")
        estimator.accept(index: 65536 + 2)
        #expect(estimator.rolloverCounter == 1 && estimator.highestSequence == 2)
        #expect(index(estimator, 65535) == 65535, "a late packet from before the roll-over")
        #expect(index(estimator, 40000) == 40000, "far behind, still the previous roll-over")
        #expect(index(estimator, 30000) == 65536 + 30000)
        estimator.accept(index: 65535)
        #expect(estimator.rolloverCounter == 1 && estimator.highestSequence == 2, "accepting an older index moves nothing")
    }

    @Test func aStreamWithCounterZeroHasNoIndexBeforeZero() {
        let estimator = RTPIndexEstimator(firstSequence: 10)
        #expect(index(estimator, 65000) == Self.none)
        #expect(index(estimator, 32778) == 32778)
    }

    @Test func theWindowRefusesReplaysAndIndicesOlderThan128() throws {
        var window = SRTPReplayWindow()
        try window.check(1000)
        window.accept(1000)
        #expect(throws: SRTPError.replayed(index: 1000)) { try window.check(1000) }
        try window.check(999)
        try window.check(1000 - 127)
        #expect(throws: SRTPError.tooOld(index: 1000 - 128)) { try window.check(1000 - 128) }
        window.accept(990)
        #expect(throws: SRTPError.replayed(index: 990)) { try window.check(990) }
        // Slide by 63, 64, 65 and past the whole window: old bits age with it.
        for step: UInt64 in [63, 64, 65, 200] {
            let highest = window.highest + step
            window.accept(highest)
            #expect(throws: SRTPError.replayed(index: highest)) { try window.check(highest) }
            try window.check(highest - 1)
        }
        var fresh = SRTPReplayWindow()
        for index: UInt64 in 0..<300 { fresh.accept(index) }
        for index: UInt64 in 173..<300 { #expect(throws: SRTPError.replayed(index: index)) { try fresh.check(index) } }
        #expect(throws: SRTPError.tooOld(index: 171)) { try fresh.check(171) }
    }

    @Test func bitsFollowTheirIndexAcrossWordBoundaries() throws {
        var window = SRTPReplayWindow()
        window.accept(500)
        window.accept(500 - 70)
        window.accept(500 + 10)
        #expect(throws: SRTPError.replayed(index: 430)) { try window.check(430) }
        #expect(throws: SRTPError.replayed(index: 500)) { try window.check(500) }
        try window.check(431)
        try window.check(429)
        window.accept(500 + 64 + 10) // 430 is now 144 behind: gone; 500 is 74 behind: in the high word
        #expect(throws: SRTPError.tooOld(index: 430)) { try window.check(430) }
        #expect(throws: SRTPError.replayed(index: 500)) { try window.check(500) }
        #expect(throws: SRTPError.replayed(index: 510)) { try window.check(510) }
        try window.check(505)
    }
}

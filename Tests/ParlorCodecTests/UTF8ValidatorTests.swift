import Testing
@testable import ParlorCodec

@Suite struct UTF8ValidatorTests {
    @Test func byteAtATimeTracksCodePointBoundaries() {
        var validator = UTF8Validator()
        var results: [Bool] = []
        var boundaries: [Bool] = []
        for byte in [UInt8]("aé€𝄞") {
            results.append(validator.validate([byte]))
            boundaries.append(validator.isComplete)
        }
        #expect(results.allSatisfy { $0 })
        #expect(boundaries == [true, false, true, false, false, true, false, false, false, true])
    }

    @Test(arguments: [
        [0xFF], [0xC1, 0xBF], [0xE0, 0x9F, 0xBF], [0xED, 0xBF, 0xBF], [0xF0, 0x8F, 0xBF, 0xBF],
        [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xC3, 0x28], [0xE2, 0x82, 0x41],
    ] as [[UInt8]])
    func rejectsInvalidSequences(bytes: [UInt8]) {
        var validator = UTF8Validator()
        let invalid = validator.validate(bytes)
        #expect(!invalid)
        #expect(!validator.isComplete)
        let afterFailure = validator.validate([0x61])
        #expect(!afterFailure, "stays failed")
        validator.reset()
        let afterReset = validator.validate([0x61])
        #expect(afterReset && validator.isComplete)
    }

    @Test func acceptsBoundaryCodePoints() {
        var validator = UTF8Validator()
        let valid = validator.validate([UInt8]("\u{7F}\u{80}\u{7FF}\u{800}\u{D7FF}\u{E000}\u{FFFF}\u{10000}\u{10FFFF}"))
        #expect(valid && validator.isComplete)
    }

    @Test func asciiFastPathStillFindsLateErrors() {
        var validator = UTF8Validator()
        let ascii = validator.validate([UInt8](repeating: 0x61, count: 37))
        #expect(ascii)
        let late = validator.validate([UInt8](repeating: 0x62, count: 64) + [0x80] + [UInt8](repeating: 0x63, count: 9))
        #expect(!late)
    }
}

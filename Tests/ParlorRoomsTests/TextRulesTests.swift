import Testing
@testable import ParlorRooms

/// Printable ASCII takes a short path past Foundation's trimming and normalisation; it must decide exactly as the
/// full check does, result and reason.
@Suite struct TextRulesTests {
    @Test func printableASCIIIsDecidedAsTheFullCheckDecides() {
        let pieces = ["a", "Z", "7", " ", "  ", "~", "\"", "\\", "{}", "alice", "x y"]
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        var values = ["", " ", "   ", "a", " a ", String(repeating: "b", count: 64), " " + String(repeating: "c", count: 65) + " "]
        for _ in 0..<2_000 {
            var value = ""
            state = state &* 6364136223846793005 &+ 1442695040888963407
            for _ in 0..<Int(state >> 59) {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                value += pieces[Int((state >> 33) % UInt64(pieces.count))]
            }
            values.append(value)
        }
        for value in values {
            #expect(TextRules.printableASCII(value) != nil, "\(value)")
            // Values over four times the byte limit are refused before either path (not compared here).
            for (min, max, bytes) in [(1, 64, 256), (1, 8, 8), (3, 10, 5)] where value.utf8.count <= bytes * 4 {
                let fast = TextRules.check(value, minCharacters: min, maxCharacters: max, maxBytes: bytes)
                let full = TextRules.checkUnicode(value, minCharacters: min, maxCharacters: max, maxBytes: bytes)
                #expect(fast == full, "\(value) \(min)…\(max) / \(bytes)")
            }
        }
    }

    @Test func anythingElseTakesTheFullCheck() {
        for value in ["tab\there", "new\nline", "del\u{7F}", "caf\u{E9}", "e\u{301}", "\u{202E}evil", "\u{A0}nbsp"] {
            #expect(TextRules.printableASCII(value) == nil, "\(value)")
        }
        #expect(TextRules.check(" e\u{301} ", minCharacters: 1, maxCharacters: 64, maxBytes: 256) == .success("\u{E9}"))
        #expect(TextRules.check("new\nline", minCharacters: 1, maxCharacters: 64, maxBytes: 256)
                == .failure(TextRuleViolation(rule: "must not contain control characters")))
    }
}

/// Issue 34, item 14: combining marks per character.
@Suite struct CombiningMarkRuleTests {
    private func check(_ value: String) -> Result<String, TextRuleViolation> {
        TextRules.check(value, minCharacters: 1, maxCharacters: 64, maxBytes: 256)
    }

    @Test func marksAreCountedInARowAfterNFC() {
        let bound = TextRules.maxCombiningMarks
        let refusal = TextRuleViolation(rule: "must not have more than \(bound) combining marks in a row")
        #expect(check("x" + String(repeating: "\u{0336}", count: bound)) == .success("x" + String(repeating: "\u{0336}", count: bound)))
        #expect(check("x" + String(repeating: "\u{0336}", count: bound + 1)) == .failure(refusal))
        // An enclosing mark and a spacing mark count too; a letter between two stacks starts a new count.
        #expect(check("x" + String(repeating: "\u{20DD}", count: bound + 1)) == .failure(refusal))
        #expect(check("क" + String(repeating: "\u{093E}", count: bound + 1)) == .failure(refusal))
        let two = "x" + String(repeating: "\u{0336}", count: bound) + "y" + String(repeating: "\u{0336}", count: bound)
        #expect(check(two) == .success(two))
        // e + U+0301 composes to é under NFC, so it is one mark fewer than it was sent with.
        let composing = "e\u{0301}" + String(repeating: "\u{0336}", count: bound)
        #expect(check(composing) == .success("\u{E9}" + String(repeating: "\u{0336}", count: bound)))
        // Chat follows the same rule.
        #expect(TextRules.checkChat("hi\n" + "x" + String(repeating: "\u{0336}", count: bound + 1)) == .failure(refusal))
    }
}

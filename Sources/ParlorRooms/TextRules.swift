import Foundation

/// The rules for text that people show each other: user names (from POST /auth and from token subjects), room
/// display names and chat. Pure (Foundation only), so the JWT claims fuzz target compiles it on its own.
public enum TextRules {
    /// A user's name: what POST /auth accepts and what a token's `sub` must be.
    public static let userName = (minCharacters: 1, maxCharacters: 64, maxBytes: 256)

    /// The text trimmed of surrounding white space and NFC-normalised, or the rule it breaks. Characters are counted
    /// as people see them; bytes are capped too, so a few characters of long combining sequences stay small.
    public static func check(_ value: String, minCharacters: Int, maxCharacters: Int, maxBytes: Int) -> Result<String, TextRuleViolation> {
        // A hostile 60 KB value is refused before normalising or counting it.
        guard value.utf8.count <= maxBytes * 4 else {
            return .failure(TextRuleViolation(rule: "must be at most \(maxCharacters) characters and \(maxBytes) bytes"))
        }
        if let printable = printableASCII(value) {
            guard printable.count >= minCharacters, printable.count <= maxCharacters else {
                return .failure(TextRuleViolation(rule: "must be \(minCharacters) to \(maxCharacters) characters after trimming spaces"))
            }
            guard printable.count <= maxBytes else {
                return .failure(TextRuleViolation(rule: "must be at most \(maxBytes) bytes of UTF-8"))
            }
            return .success(String(decoding: printable, as: UTF8.self))
        }
        return checkUnicode(value, minCharacters: minCharacters, maxCharacters: maxCharacters, maxBytes: maxBytes)
    }

    /// The value without its leading and trailing spaces when every byte is printable ASCII or a space, else nil.
    /// For such text the full check reduces to this: NFC leaves it as it is, each byte is one character, and no
    /// byte is a control, format or invisible character. Foundation's trimming and normalisation were a fifth of
    /// POST /auth's time on its loop (and ran for every token's subject).
    static func printableASCII(_ value: String) -> ArraySlice<UInt8>? {
        var value = value
        return value.withUTF8 { bytes -> ArraySlice<UInt8>? in
            guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
            let space = UInt8(ascii: " ")
            guard let first = bytes.firstIndex(where: { $0 != space }), let last = bytes.lastIndex(where: { $0 != space }) else { return [] }
            return ArraySlice(bytes[first...last])
        }
    }

    /// The full check, for text with anything beyond printable ASCII.
    static func checkUnicode(_ value: String, minCharacters: Int, maxCharacters: Int, maxBytes: Int) -> Result<String, TextRuleViolation> {
        let text = value.trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping
        let count = text.count
        guard count >= minCharacters, count <= maxCharacters else {
            return .failure(TextRuleViolation(rule: "must be \(minCharacters) to \(maxCharacters) characters after trimming spaces"))
        }
        guard text.utf8.count <= maxBytes else {
            return .failure(TextRuleViolation(rule: "must be at most \(maxBytes) bytes of UTF-8"))
        }
        var marksInARow = 0
        for scalar in text.unicodeScalars {
            if let rule = refusal(of: scalar) { return .failure(TextRuleViolation(rule: rule)) }
            marksInARow = isCombiningMark(scalar) ? marksInARow + 1 : 0
            if marksInARow > maxCombiningMarks {
                return .failure(TextRuleViolation(rule: "must not have more than \(maxCombiningMarks) combining marks in a row"))
            }
        }
        return .success(text)
    }

    /// Combining marks one character may carry. Stacked marks draw above and below their line (one letter with 120
    /// of them covered the tiles around a name). The deepest stacks real writing uses (Tibetan stacks of Sanskrit
    /// words, Biblical Hebrew with points and cantillation) take about 5 or 6 after NFC, which also folds Latin,
    /// Greek and Vietnamese accents into single letters; Unicode's stream-safe format allows 30.
    public static let maxCombiningMarks = 8

    static func isCombiningMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }

    /// Why a character may not appear in a name, if it may not: what it would let a name hide or pretend.
    static func refusal(of scalar: Unicode.Scalar) -> String? {
        switch scalar.value {
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C:
            return "must not contain bidirectional control characters"
        case 0xE0000...0xE007F:
            return "must not contain tag characters"
        case 0x200B...0x200D, 0x2060...0x2064, 0xFEFF, 0x00AD, 0x034F, 0x180E, 0x115F, 0x1160, 0x3164, 0xFFA0:
            return "must not contain invisible characters"
        default:
            break
        }
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator:
            return "must not contain control characters"
        case .format:
            // Other format characters (Arabic number signs, interlinear annotation, …) are invisible or reorder text.
            return "must not contain invisible characters"
        default:
            return nil
        }
    }
}

/// The rule a text broke, phrased to follow the field's name ("name must …").
public struct TextRuleViolation: Error, Sendable, Equatable {
    public let rule: String
}

extension TextRules {
    /// A chat message: 1–2,000 characters and at most 8 KiB.
    public static let chatMessage = (minCharacters: 1, maxCharacters: 2_000, maxBytes: 8 * 1024)

    /// Chat text follows the name rules (trimmed, NFC, no control, bidirectional or invisible characters), except
    /// that it may span lines.
    public static func checkChat(_ value: String) -> Result<String, TextRuleViolation> {
        let text = value.replacingOccurrences(of: "\r\n", with: "\n")
        // A line break is the one control character chat allows: the rest is checked as a name would be.
        return check(text.replacingOccurrences(of: "\n", with: " "), minCharacters: chatMessage.minCharacters,
                     maxCharacters: chatMessage.maxCharacters, maxBytes: chatMessage.maxBytes)
            .map { _ in text.trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping }
    }

    /// A reaction: one grapheme cluster that is an emoji, at most 32 bytes, with no control or bidirectional characters.
    public static func checkReaction(_ value: String) -> Result<String, TextRuleViolation> {
        let rule = TextRuleViolation(rule: "must be one emoji of at most 32 bytes")
        guard value.utf8.count <= 32, value.count == 1, let first = value.unicodeScalars.first,
              first.value > 0x7F, first.properties.isEmoji else { return .failure(rule) }
        for scalar in value.unicodeScalars {
            // Joiners, variation selectors and tag characters build emoji sequences; controls and bidi marks do not.
            switch scalar.properties.generalCategory {
            case .control, .lineSeparator, .paragraphSeparator: return .failure(rule)
            default: break
            }
            if (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value) || scalar.value == 0x200E
                || scalar.value == 0x200F || scalar.value == 0x061C { return .failure(rule) }
        }
        return .success(value)
    }
}

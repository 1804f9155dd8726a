/// Byte-level ASCII helpers shared by the codecs.
///
/// Parsing stays on `UInt8` so that no `String` is created until a value is known to be well formed.
enum ASCII {
    static let cr = UInt8(ascii: "\r")
    static let lf = UInt8(ascii: "\n")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let colon = UInt8(ascii: ":")
    static let semicolon = UInt8(ascii: ";")
    static let comma = UInt8(ascii: ",")
    static let slash = UInt8(ascii: "/")
    static let question = UInt8(ascii: "?")
    static let percent = UInt8(ascii: "%")
    static let plus = UInt8(ascii: "+")
    static let ampersand = UInt8(ascii: "&")
    static let equals = UInt8(ascii: "=")
    static let asterisk = UInt8(ascii: "*")

    /// RFC 9110 `tchar`: the characters allowed in methods and header names. A 128-bit set (bit b for byte b),
    /// since every header name of every request is checked byte by byte; `tokenCharsReferenceTest` checks it
    /// against the grammar's list.
    static func isTokenChar(_ byte: UInt8) -> Bool {
        // ALPHA, DIGIT and ! # $ % & ' * + - . ^ _ ` | ~
        let below64: UInt64 = 0x03FF_6CFA_0000_0000, from64: UInt64 = 0x57FF_FFFF_C7FF_FFFE
        if byte < 64 { return (below64 >> UInt64(byte)) & 1 != 0 }
        return byte < 128 && (from64 >> UInt64(byte &- 64)) & 1 != 0
    }

    /// True when `bytes` holds a control character other than tab, or DEL: what a field value must not contain
    /// (obs-text, 0x80 and up, is tolerated). Eight bytes at a time, since values include 200-byte tokens; a word
    /// that may hold one is checked byte by byte.
    static func containsFieldValueControl(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let clean = ByteWords.cleanPrefixLength(bytes) { word in
            ByteWords.hasByte(below: 0x20, word) || ByteWords.hasByte(0x7F, in: word)
        }
        for byte in bytes[clean...] where byte < space ? byte != tab : byte == 0x7F { return true }
        return false
    }

    /// True when `bytes` holds CR, LF or NUL, which must not reach a header line we write (response splitting).
    static func containsLineBreakOrNUL(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let clean = ByteWords.cleanPrefixLength(bytes) { ByteWords.hasByte(below: 0x0E, $0) }  // CR, LF and NUL are all below 0x0E
        return bytes[clean...].contains { $0 == cr || $0 == lf || $0 == 0 }
    }

    /// Optional whitespace (OWS) as HTTP defines it: space or horizontal tab.
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == space || byte == tab
    }

    static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    /// Case-insensitive comparison of ASCII text without allocating lowercased copies.
    static func equalsIgnoringCase(_ lhs: String, _ rhs: String) -> Bool {
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        // Header lookups call this for every field of every request. `withUTF8` gives contiguous bytes for small
        // strings too (most header names are, and `utf8.withContiguousStorageIfAvailable` has none for them).
        var left = lhs, right = rhs
        return left.withUTF8 { l in
            right.withUTF8 { r in
                for index in 0..<l.count where l[index] != r[index] && lowercased(l[index]) != lowercased(r[index]) { return false }
                return true
            }
        }
    }

    /// The slice with leading and trailing spaces and tabs removed.
    static func trimmingWhitespace(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard let first = bytes.firstIndex(where: { !isWhitespace($0) }),
              let last = bytes.lastIndex(where: { !isWhitespace($0) }) else { return bytes[bytes.endIndex...] }
        return bytes[first...last]
    }
}

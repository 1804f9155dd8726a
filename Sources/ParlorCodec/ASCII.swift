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

    /// RFC 9110 `tchar`: the characters allowed in methods and header names.
    static func isTokenChar(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"),
             UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
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
        let left = lhs.utf8, right = rhs.utf8
        guard left.count == right.count else { return false }
        // Header lookups call this for every field of every request: compare contiguous bytes where Swift has them.
        let contiguous = left.withContiguousStorageIfAvailable { l in
            right.withContiguousStorageIfAvailable { r in
                for index in 0..<l.count where l[index] != r[index] && lowercased(l[index]) != lowercased(r[index]) { return false }
                return true
            }
        }
        if let contiguous, let equal = contiguous { return equal }
        return zip(left, right).allSatisfy { lowercased($0) == lowercased($1) }
    }

    /// The slice with leading and trailing spaces and tabs removed.
    static func trimmingWhitespace(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard let first = bytes.firstIndex(where: { !isWhitespace($0) }),
              let last = bytes.lastIndex(where: { !isWhitespace($0) }) else { return bytes[bytes.endIndex...] }
        return bytes[first...last]
    }
}

import Glibc

/// Opaque, unguessable ids: a type prefix and 128 bits from the system CSPRNG, as 32 lowercase hex digits. Member
/// ids (one per join) put the time in the first 48 of those bits (`makeTimeOrdered`).
public enum Identifier {
    public static func make(_ prefix: String) -> String {
        let random = randomWords()
        return format(prefix, high: random.0, low: random.1)
    }

    /// An id whose first 48 bits are `milliseconds` (Unix time) and the other 80 random: ids made later sort later,
    /// so a table keyed by them grows at its end instead of at a random page. Still unguessable (80 random bits).
    public static func makeTimeOrdered(_ prefix: String, milliseconds: Int64) -> String {
        let random = randomWords()
        let time = min(UInt64(clamping: milliseconds), 0xFFFF_FFFF_FFFF)  // 48 bits last until the year 10889
        return format(prefix, high: time << 16 | random.0 & 0xFFFF, low: random.1)
    }

    /// 16 bytes in one getrandom(2) call (glibc's arc4random_buf); SystemRandomNumberGenerator makes one per 8
    /// bytes. Every join, session and room takes an id.
    private static func randomWords() -> (UInt64, UInt64) {
        var random: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &random) { arc4random_buf($0.baseAddress!, $0.count) }
        return random
    }

    public static let user = "USR", room = "RM", member = "MEM", session = "SES", token = "TOK", node = "NODE", recording = "REC"

    /// `prefix-` and the two words as 16 hex digits each, written straight into the string's storage.
    static func format(_ prefix: String, high: UInt64, low: UInt64) -> String {
        let prefixLength = prefix.utf8.count
        return String(unsafeUninitializedCapacity: prefixLength + 33) { buffer in
            var index = 0
            for byte in prefix.utf8 {
                buffer[index] = byte
                index += 1
            }
            buffer[index] = UInt8(ascii: "-")
            index += 1
            for word in (0..<2).lazy.map({ $0 == 0 ? high : low }) {
                for shift in stride(from: 60, through: 0, by: -4) {
                    let digit = UInt8(truncatingIfNeeded: word >> UInt64(shift)) & 0xF
                    buffer[index] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
                    index += 1
                }
            }
            return index
        }
    }
}

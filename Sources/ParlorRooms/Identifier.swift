import Glibc

/// Opaque, unguessable ids: a type prefix and 128 random bits from the system CSPRNG, as 32 lowercase hex digits.
public enum Identifier {
    public static func make(_ prefix: String) -> String {
        // One getrandom(2) call for all 16 bytes (glibc's arc4random_buf); SystemRandomNumberGenerator makes one
        // per 8 bytes. Every join, session and room takes an id.
        var random: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &random) { arc4random_buf($0.baseAddress!, $0.count) }
        return format(prefix, high: random.0, low: random.1)
    }

    public static let user = "USR", room = "RM", member = "MEM", session = "SES", token = "TOK", node = "NODE"

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

/// Scanning bytes eight at a time: a whole word is checked with a few arithmetic operations, and only a word that
/// may hold what is looked for is checked byte by byte. Header values (200-byte tokens) and JSON strings (ids, names,
/// timestamps on every event) are scanned this way.
public enum ByteWords {
    @usableFromInline static let ones: UInt64 = 0x0101_0101_0101_0101

    /// Whether some byte of `word` is below `limit` (at most 0x80): the "has less than" bit trick, exact as a whole.
    @inlinable public static func hasByte(below limit: UInt64, _ word: UInt64) -> Bool {
        (word &- ones &* limit) & ~word & 0x8080_8080_8080_8080 != 0
    }

    /// Whether some byte of `word` is `value`.
    @inlinable public static func hasByte(_ value: UInt8, in word: UInt64) -> Bool {
        hasByte(below: 1, word ^ (ones &* UInt64(value)))
    }

    /// How many leading bytes lie in whole 8-byte words for which `suspicious` is false.
    @inlinable public static func cleanPrefixLength(_ bytes: UnsafeBufferPointer<UInt8>, suspicious: (UInt64) -> Bool) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        let raw = UnsafeRawPointer(base)
        var index = 0
        while index + 8 <= bytes.count, !suspicious(raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)) { index += 8 }
        return index
    }
}

/// Incremental UTF-8 validator (RFC 3629): rejects overlong forms, surrogates and code points above U+10FFFF.
///
/// Input may be split anywhere, even one byte at a time; the state between calls is just the number
/// of continuation bytes still expected and the range the next one must fall in. Tightening that range
/// after the lead byte is what rules out overlongs (E0, F0), surrogates (ED) and values past U+10FFFF (F4),
/// so invalid input is reported at the first byte that makes it invalid.
public struct UTF8Validator: Sendable {
    private var remaining: UInt8 = 0
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF
    private var failed = false

    public init() {}

    /// True when everything validated so far ends at a code point boundary (and nothing was invalid).
    public var isComplete: Bool { !failed && remaining == 0 }

    public mutating func reset() {
        self = UTF8Validator()
    }

    /// Validates the next bytes of the stream; false as soon as the stream is invalid (and from then on).
    public mutating func validate(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !failed else { return false }
        var index = 0
        let count = bytes.count
        while index < count {
            // ASCII fast path: eight bytes at a time while no sequence is open.
            if remaining == 0 {
                while index + 8 <= count,
                      bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                    index += 8
                }
                guard index < count else { break }
            }
            guard step(bytes[index]) else {
                failed = true
                return false
            }
            index += 1
        }
        return true
    }

    public mutating func validate(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { validate($0) }
    }

    /// Advances the state by one byte; false if the byte cannot appear here.
    private mutating func step(_ byte: UInt8) -> Bool {
        if remaining > 0 {
            guard byte >= lower && byte <= upper else { return false }
            remaining -= 1
            lower = 0x80
            upper = 0xBF
            return true
        }
        switch byte {
        case 0x00...0x7F: return true
        case 0xC2...0xDF: remaining = 1
        case 0xE0: remaining = 2; lower = 0xA0          // below would be overlong
        case 0xE1...0xEC, 0xEE...0xEF: remaining = 2
        case 0xED: remaining = 2; upper = 0x9F          // above would be a UTF-16 surrogate
        case 0xF0: remaining = 3; lower = 0x90          // below would be overlong
        case 0xF1...0xF3: remaining = 3
        case 0xF4: remaining = 3; upper = 0x8F          // above would exceed U+10FFFF
        default: return false                           // continuation byte, C0/C1 overlong, F5...FF
        }
        return true
    }
}

extension UTF8Validator {
    /// Whether `bytes` is, on its own, complete and valid UTF-8.
    static func isValid<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        var validator = UTF8Validator()
        let valid = bytes.withContiguousStorageIfAvailable { validator.validate(UnsafeRawBufferPointer($0)) }
            ?? validator.validate(Array(bytes))
        return valid && validator.isComplete
    }
}

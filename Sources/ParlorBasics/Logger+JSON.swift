#if canImport(Glibc)
import Glibc
#endif

extension Logger {
    /// Fields whose values are numbers in JSON; every other field is a string.
    private static let numericFields: Set<String> = ["status", "bytes", "duration_ms", "attempt", "count", "members", "commands"]

    /// `{"time":"2026-12-01T03:04:05.678Z","level":"info","message":"…",<fields>}` and a newline.
    func appendJSONLine(_ level: Level, _ message: String, _ fields: KeyValuePairs<String, String>, to out: inout [UInt8]) {
        out.append(contentsOf: #"{"time":""#.utf8)
        Self.appendUTCTimestamp(to: &out)
        out.append(contentsOf: #"","level":""#.utf8)
        out.append(contentsOf: level.name.utf8)
        out.append(contentsOf: #"","message":"#.utf8)
        Self.appendJSONString(message, to: &out)
        for (key, value) in fields where key != "time" && key != "level" && key != "message" {
            out.append(UInt8(ascii: ","))
            Self.appendJSONString(key, to: &out)
            out.append(UInt8(ascii: ":"))
            if Self.numericFields.contains(key), Self.isJSONNumber(value) { out.append(contentsOf: value.utf8) } else { Self.appendJSONString(value, to: &out) }
        }
        out.append(contentsOf: "}\n".utf8)
    }

    /// RFC 3339 in UTC with milliseconds, from the wall clock, without Foundation.
    static func appendUTCTimestamp(to out: inout [UInt8]) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        appendDigits(Int(parts.tm_year) + 1900, width: 4, to: &out)
        out.append(UInt8(ascii: "-"))
        appendDigits(Int(parts.tm_mon) + 1, width: 2, to: &out)
        out.append(UInt8(ascii: "-"))
        appendDigits(Int(parts.tm_mday), width: 2, to: &out)
        out.append(UInt8(ascii: "T"))
        appendDigits(Int(parts.tm_hour), width: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(Int(parts.tm_min), width: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(Int(parts.tm_sec), width: 2, to: &out)
        out.append(UInt8(ascii: "."))
        appendDigits(now.tv_nsec / 1_000_000, width: 3, to: &out)
        out.append(UInt8(ascii: "Z"))
    }

    /// A non-negative number, zero-padded to at least `width` digits, written in place at the end of `out`.
    static func appendDigits(_ value: Int, width: Int, to out: inout [UInt8]) {
        appendDigits(UInt64(max(0, value)), width: width, to: &out)
    }

    static func appendDigits(_ value: UInt64, width: Int = 1, to out: inout [UInt8]) {
        // Into a stack buffer, then one append: zeros appended and overwritten in the array paid a generic append
        // and a uniqueness check per digit (~400 instructions for a status code; an access log line has four numbers).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var index = digits.count, remaining = value
            repeat {
                index -= 1
                digits[index] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
            } while remaining > 0
            for _ in 0..<max(0, width - (digits.count - index)) { out.append(UInt8(ascii: "0")) }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[index...]))
        }
    }

    static func isJSONNumber(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        guard !bytes.isEmpty, bytes.count <= 20, bytes[0] != 0x2E, bytes.last != 0x2E else { return false }
        if bytes.count > 1, bytes[0] == 0x30, bytes[1] != 0x2E { return false }
        var dots = 0
        for byte in bytes {
            if byte == 0x2E { dots += 1 } else if byte < 0x30 || byte > 0x39 { return false }
        }
        return dots <= 1
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped, and U+2028/U+2029 too (some
    /// JavaScript readers treat them as line ends). Works on the UTF-8 bytes; everything else is copied.
    static func appendJSONString(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        let bytes = value.utf8
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            switch byte {
            case 0x22: out.append(contentsOf: #"\""#.utf8)
            case 0x5C: out.append(contentsOf: #"\\"#.utf8)
            case 0x0A: out.append(contentsOf: #"\n"#.utf8)
            case 0x0D: out.append(contentsOf: #"\r"#.utf8)
            case 0x09: out.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20, 0x7F: appendUnicodeEscape(UInt32(byte), to: &out)
            case 0xE2:
                // U+2028 and U+2029 are E2 80 A8 and E2 80 A9 in UTF-8.
                let second = bytes.index(after: index)
                if second < bytes.endIndex, bytes[second] == 0x80 {
                    let third = bytes.index(after: second)
                    if third < bytes.endIndex, bytes[third] == 0xA8 || bytes[third] == 0xA9 {
                        appendUnicodeEscape(bytes[third] == 0xA8 ? 0x2028 : 0x2029, to: &out)
                        index = bytes.index(after: third)
                        continue
                    }
                }
                out.append(byte)
            default: out.append(byte)
            }
            index = bytes.index(after: index)
        }
        out.append(UInt8(ascii: "\""))
    }

    private static func appendUnicodeEscape(_ value: UInt32, to out: inout [UInt8]) {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        out.append(contentsOf: #"\u"#.utf8)
        for shift in stride(from: 12, through: 0, by: -4) { out.append(hex[Int((value >> UInt32(shift)) & 0xF)]) }
    }
}

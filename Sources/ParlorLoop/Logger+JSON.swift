#if canImport(Glibc)
import Glibc
#endif

extension Logger {
    /// Fields whose values are numbers in JSON; every other field is a string.
    private static let numericFields: Set<String> = ["status", "bytes", "duration_ms", "attempt", "count", "members", "commands"]

    /// `{"time":"2026-12-01T03:04:05.678Z","level":"info","message":"…",<fields>}` and a newline.
    func jsonLine(_ level: Level, _ message: String, _ fields: KeyValuePairs<String, String>) -> String {
        var line = #"{"time":""# + Self.utcTimestamp() + #"","level":""# + level.name + #"","message":"#
        Self.appendJSONString(message, to: &line)
        for (key, value) in fields where key != "time" && key != "level" && key != "message" {
            line += ","
            Self.appendJSONString(key, to: &line)
            line += ":"
            if Self.numericFields.contains(key), Self.isJSONNumber(value) { line += value } else { Self.appendJSONString(value, to: &line) }
        }
        return line + "}\n"
    }

    /// RFC 3339 in UTC with milliseconds, from the wall clock, without Foundation.
    static func utcTimestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
        }
        return pad(parts.tm_year + 1900, 4) + "-" + pad(parts.tm_mon + 1, 2) + "-" + pad(parts.tm_mday, 2) + "T"
            + pad(parts.tm_hour, 2) + ":" + pad(parts.tm_min, 2) + ":" + pad(parts.tm_sec, 2) + "."
            + pad(Int32(now.tv_nsec / 1_000_000), 3) + "Z"
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

    static func appendJSONString(_ value: String, to out: inout String) {
        out += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || scalar.value == 0x2028 || scalar.value == 0x2029 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}

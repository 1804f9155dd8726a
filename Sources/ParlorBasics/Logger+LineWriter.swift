extension Logger {
    /// Writes one line field by field straight into a byte buffer: numbers as digits, no `String` per value and no
    /// `KeyValuePairs`. For lines made per request (the access log); the bytes are those `appendLine` writes for the
    /// same fields given as strings, in either format (LoggerLineTests compares them).
    public struct LineWriter {
        let json: Bool

        /// `key=value` (quoted if needed) or `,"key":"value"`.
        public func text(_ key: StaticString, _ value: String, to out: inout [UInt8]) {
            appendKey(key, to: &out)
            if json { Logger.appendJSONString(value, to: &out) } else { Logger.appendQuotedIfNeeded(value, to: &out) }
        }

        /// A whole number, unquoted in both formats.
        public func integer(_ key: StaticString, _ value: Int, to out: inout [UInt8]) {
            appendKey(key, to: &out)
            if value < 0 { out.append(UInt8(ascii: "-")) }
            Logger.appendDigits(UInt64(value.magnitude), to: &out)
        }

        /// A duration given in microseconds, written as milliseconds with three decimals (`12.034`).
        public func milliseconds(_ key: StaticString, micros: UInt64, to out: inout [UInt8]) {
            appendKey(key, to: &out)
            Logger.appendDigits(micros / 1000, to: &out)
            out.append(UInt8(ascii: "."))
            Logger.appendDigits(micros % 1000, width: 3, to: &out)
        }

        /// Closes the line, newline included.
        public func end(to out: inout [UInt8]) {
            if json { out.append(UInt8(ascii: "}")) }
            out.append(UInt8(ascii: "\n"))
        }

        /// Keys are ASCII names chosen in code: nothing in them needs escaping.
        private func appendKey(_ key: StaticString, to out: inout [UInt8]) {
            let name = UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
            if json {
                out.append(contentsOf: #",""#.utf8)
                out.append(contentsOf: name)
                out.append(contentsOf: #"":"#.utf8)
            } else {
                out.append(UInt8(ascii: " "))
                out.append(contentsOf: name)
                out.append(UInt8(ascii: "="))
            }
        }
    }

    /// Starts a line in the configured format (the time, level and message); add fields, then `end`.
    public func beginLine(_ level: Level, _ message: String, to out: inout [UInt8]) -> LineWriter {
        if format == .json {
            out.append(contentsOf: #"{"time":""#.utf8)
            Self.appendUTCTimestamp(to: &out)
            out.append(contentsOf: #"","level":""#.utf8)
            out.appendUTF8(level.name)
            out.append(contentsOf: #"","message":"#.utf8)
            Self.appendJSONString(message, to: &out)
        } else {
            out.appendUTF8("level=")
            out.appendUTF8(level.name)
            out.appendUTF8(" msg=")
            Self.appendQuotedIfNeeded(message, to: &out)
        }
        return LineWriter(json: format == .json)
    }
}

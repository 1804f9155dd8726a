extension Logger {
    /// The line in the configured format, newline included, appended to `out` as bytes: the access log formats one
    /// per request, straight into its loop's pending log buffer.
    public func appendLine(_ level: Level, _ message: String, _ fields: KeyValuePairs<String, String>, to out: inout [UInt8]) {
        if format == .json {
            appendJSONLine(level, message, fields, to: &out)
            return
        }
        out.appendUTF8("level=")
        out.appendUTF8(level.name)
        out.appendUTF8(" msg=")
        Self.appendQuotedIfNeeded(message, to: &out)
        for (key, value) in fields {
            out.append(UInt8(ascii: " "))
            out.appendUTF8(key)
            out.append(UInt8(ascii: "="))
            Self.appendQuotedIfNeeded(value, to: &out)
        }
        out.append(UInt8(ascii: "\n"))
    }

    /// logfmt: a value with spaces, quotes, `=`, backslashes or non-ASCII bytes (or an empty one) is quoted with
    /// the same escaping as JSON lines, so a quoted value reads back as JSON.
    static func appendQuotedIfNeeded(_ value: String, to out: inout [UInt8]) {
        var value = value
        let plain = value.withUTF8 { bytes in
            guard !bytes.isEmpty, !bytes.contains(where: { $0 <= 0x20 || $0 == 0x22 || $0 == 0x3D || $0 == 0x5C || $0 >= 0x7F }) else { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if !plain { appendJSONString(value, to: &out) }
    }
}

extension [UInt8] {
    /// The string's UTF-8 bytes, copied from its contiguous storage (the generic `append(contentsOf: text.utf8)`
    /// costs several times more per call, and a log line makes about twenty).
    mutating func appendUTF8(_ text: String) {
        var text = text
        text.withUTF8 { append(contentsOf: $0) }
    }
}

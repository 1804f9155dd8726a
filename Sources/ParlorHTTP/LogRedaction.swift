/// Keeps secrets out of log lines: a path that somehow carries `token=…` (a decoded `%3F`, a path segment) is
/// logged with the value replaced. Query strings are never logged at all. Bytes only: this runs per access log line.
public enum LogRedaction {
    private static let marker: [UInt8] = Array("token=".utf8)

    public static func path(_ path: String) -> String {
        // Nearly every path has no marker: look on the string's own bytes before copying anything.
        var unchanged = path
        guard let first = unchanged.withUTF8({ find($0, from: 0) }) else { return path }
        let bytes = Array(path.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        var match: Int? = first
        while let start = match {
            let valueStart = start + marker.count
            out.append(contentsOf: bytes[index..<valueStart])
            out.append(contentsOf: "REDACTED".utf8)
            var end = valueStart
            while end < bytes.count, bytes[end] != 0x26, bytes[end] != 0x3B, bytes[end] != 0x2F, bytes[end] != 0x3F { end += 1 }
            index = end
            match = bytes.withUnsafeBufferPointer { find($0, from: end) }
        }
        out.append(contentsOf: bytes[index...])
        return String(decoding: out, as: UTF8.self)
    }

    /// The offset of the next `token=` (ASCII case ignored) at or after `from`.
    private static func find(_ bytes: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        guard bytes.count >= marker.count else { return nil }
        var position = from
        while position + marker.count <= bytes.count {
            var matched = true
            for offset in 0..<marker.count {
                var byte = bytes[position + offset]
                if byte >= 0x41 && byte <= 0x5A { byte |= 0x20 }
                if byte != marker[offset] { matched = false; break }
            }
            if matched { return position }
            position += 1
        }
        return nil
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// Structured log lines on stderr, logfmt (`--log-format text`) or one JSON object per line (`json`); stdout stays for the "listening on" line that scripts read.
public struct Logger: Sendable {
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        case debug, info, warning, error, off
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        public init?(name: String) {
            switch name.lowercased() {
            case "debug": self = .debug
            case "info": self = .info
            case "warn", "warning": self = .warning
            case "error": self = .error
            case "off", "none", "quiet": self = .off
            default: return nil
            }
        }
        var name: String { ["debug", "info", "warn", "error", "off"][rawValue] }
    }

    public enum Format: String, Sendable, CaseIterable {
        case text, json
    }

    public var level: Level
    public var format: Format

    public init(level: Level = .info, format: Format = .text) {
        self.level = level
        self.format = format
    }

    public func isEnabled(_ level: Level) -> Bool { level >= self.level && self.level != .off }

    /// Writes `level=… msg="…" key=value…`; values with spaces or quotes are quoted.
    public func log(_ level: Level, _ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        guard isEnabled(level) else { return }
        var bytes: [UInt8] = []
        appendLine(level, message, fields, to: &bytes)
        // One write(2) per line keeps lines from different threads whole.
        _ = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }

    /// The formatted line with its newline, or nil when `level` is not logged.
    public func line(_ level: Level, _ message: String, _ fields: KeyValuePairs<String, String> = [:]) -> String? {
        guard isEnabled(level) else { return nil }
        var bytes: [UInt8] = []
        appendLine(level, message, fields, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    public func debug(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.debug, message, fields) }
    public func info(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.info, message, fields) }
    public func warning(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.warning, message, fields) }
    public func error(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.error, message, fields) }
}

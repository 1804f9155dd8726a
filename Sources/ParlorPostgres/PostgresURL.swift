import CLibPQ

/// A `postgres://` or `postgresql://` connection URI, with any of libpq's parameters (`sslmode`, `password`,
/// `connect_timeout`, …). libpq parses it; this only checks it early, so a typo is a clear error at start.
public struct PostgresURL: Sendable, Equatable, CustomStringConvertible {
    public let string: String

    /// Whether `text` names a PostgreSQL database rather than an SQLite file.
    public static func isPostgres(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    public init(_ text: String) throws(PostgresError) {
        guard Self.isPostgres(text) else {
            throw PostgresError.misuse("\(text.prefix(40)) is not a postgres:// or postgresql:// URL")
        }
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(text, &errorMessage) else {
            let reason = errorMessage.map { String(cString: $0).trimmingTrailingNewlines } ?? "out of memory"
            PQfreemem(errorMessage)
            throw PostgresError.misuse("invalid PostgreSQL URL: \(reason)")
        }
        PQconninfoFree(options)
        string = text
    }

    /// The URL with its password (in the userinfo or as `password=`) masked, for logs.
    public var description: String {
        var text = string
        if let scheme = text.range(of: "://"), let at = text[scheme.upperBound...].firstIndex(of: "@"),
           let colon = text[scheme.upperBound..<at].firstIndex(of: ":") {
            text.replaceSubrange(text.index(after: colon)..<at, with: "***")
        }
        if let range = text.range(of: "password=") {
            let end = text[range.upperBound...].firstIndex(of: "&") ?? text.endIndex
            text.replaceSubrange(range.upperBound..<end, with: "***")
        }
        return text
    }
}

extension String {
    var trimmingTrailingNewlines: String {
        var text = self
        while text.last == "\n" { text.removeLast() }
        return text
    }
}

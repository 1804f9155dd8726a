import Foundation

/// Required-field access that throws a typed error naming the field, for decoding the server's replies.
struct JSONFields {
    let json: JSONValue
    let context: String

    init(_ json: JSONValue, _ context: String) throws(ParlorError) {
        guard case .object = json else { throw .invalidResponse("\(context) is not a JSON object: \(json)") }
        self.json = json
        self.context = context
    }

    subscript(key: String) -> JSONValue? {
        guard let value = json[key], !value.isNull else { return nil }
        return value
    }

    func string(_ key: String) throws(ParlorError) -> String {
        guard let value = self[key]?.stringValue else { throw missing(key, "a string") }
        return value
    }

    func integer(_ key: String) throws(ParlorError) -> Int64 {
        guard let value = self[key]?.integerValue else { throw missing(key, "a whole number") }
        return value
    }

    func array(_ key: String) throws(ParlorError) -> [JSONValue] {
        guard let value = self[key]?.arrayValue else { throw missing(key, "an array") }
        return value
    }

    func object(_ key: String) throws(ParlorError) -> JSONFields {
        guard let value = self[key] else { throw missing(key, "an object") }
        return try JSONFields(value, "\(context).\(key)")
    }

    func date(_ key: String) -> Date? {
        self[key]?.stringValue.flatMap(ISO8601.parse)
    }

    private func missing(_ key: String, _ kind: String) -> ParlorError {
        .invalidResponse("\(context).\(key) should be \(kind), got \(json[key].map(\.description) ?? "nothing")")
    }
}

/// The server's timestamps: ISO 8601 UTC with milliseconds ("2026-11-30T01:53:30.123Z").
enum ISO8601 {
    static func parse(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle())
    }
}

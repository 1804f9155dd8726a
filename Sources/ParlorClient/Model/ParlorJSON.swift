import Foundation

/// A JSON value as the server sent it: what `RoomEvent.raw` carries, and what the client decodes its models from.
public enum ParlorJSON: Sendable, Hashable, Codable, CustomStringConvertible {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([ParlorJSON])
    case object([String: ParlorJSON])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([ParlorJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: ParlorJSON].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// Parses UTF-8 JSON text; nil if it is not JSON.
    public static func parse(_ bytes: some Sequence<UInt8>) -> ParlorJSON? {
        try? JSONDecoder().decode(ParlorJSON.self, from: Data(bytes))
    }

    public static func parse(_ text: String) -> ParlorJSON? {
        parse(text.utf8)
    }

    /// Compact JSON text with sorted keys.
    public var encodedString: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    public var description: String { encodedString }

    public subscript(key: String) -> ParlorJSON? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// Whole numbers, also when the sender wrote them as doubles.
    public var integerValue: Int64? {
        switch self {
        case .integer(let value): value
        case .double(let value) where value.rounded() == value && abs(value) < 9.0e15: Int64(value)
        default: nil
        }
    }

    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    public var arrayValue: [ParlorJSON]? {
        if case .array(let value) = self { return value }
        return nil
    }

    public var objectValue: [String: ParlorJSON]? {
        if case .object(let value) = self { return value }
        return nil
    }

    public var isNull: Bool { self == .null }
}

/// Required-field access that throws a typed error naming the field, for decoding the server's replies.
struct JSONFields {
    let json: ParlorJSON
    let context: String

    init(_ json: ParlorJSON, _ context: String) throws(ParlorError) {
        guard case .object = json else { throw .invalidResponse("\(context) is not a JSON object: \(json)") }
        self.json = json
        self.context = context
    }

    subscript(key: String) -> ParlorJSON? {
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

    func array(_ key: String) throws(ParlorError) -> [ParlorJSON] {
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

/// What clients need beyond the server's use: hashing, `Codable` (to convert to and from an app's own models), a
/// readable description, and whole numbers as `Int64`.
extension JSONValue: Hashable, Codable, CustomStringConvertible {
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(1); hasher.combine(value)
        case .number(let value): hasher.combine(2); hasher.combine(value)
        case .string(let value): hasher.combine(3); hasher.combine(value)
        case .array(let elements): hasher.combine(4); hasher.combine(elements)
        case .object(let object): hasher.combine(5); hasher.combine(object)
        }
    }

    /// Compact JSON text.
    public var description: String { encodedString() }

    /// Whole numbers, also when the sender wrote them with a fraction of zero (`2.0`).
    public var integerValue: Int64? { intValue.map(Int64.init) }

    /// The same value with every object's keys sorted: output that diffs and compares as text (the CLI's `--json`).
    public func sortingKeys() -> JSONValue {
        switch self {
        case .array(let elements): .array(elements.map { $0.sortingKeys() })
        case .object(let object):
            .object(JSONObject(sortingKeysOf: Dictionary(object.pairs.map { ($0.key, $0.value.sortingKeys()) }, uniquingKeysWith: { $1 })))
        default: self
        }
    }

    /// Parses UTF-8 JSON text; nil if it is not JSON.
    public static func parse(_ bytes: some Collection<UInt8>) -> JSONValue? {
        try? JSONParser.parse(Array(bytes))
    }

    public static func parse(_ text: String) -> JSONValue? {
        try? JSONParser.parse(text)
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        if let keyed = try? decoder.container(keyedBy: Key.self) {
            // Decoders do not promise the document's key order: sort, so the same input always gives the same value.
            var object = JSONObject()
            for key in keyed.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
                object.appendParsed(key.stringValue, try keyed.decode(JSONValue.self, forKey: key))
            }
            self = .object(object)
            return
        }
        if var unkeyed = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !unkeyed.isAtEnd { elements.append(try unkeyed.decode(JSONValue.self)) }
            self = .array(elements)
            return
        }
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .object(let object):
            var container = encoder.container(keyedBy: Key.self)
            for (key, value) in object.pairs { try container.encode(value, forKey: Key(stringValue: key)) }
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(element) }
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .number(let value):
            var container = encoder.singleValueContainer()
            if let whole = integerValue { try container.encode(whole) } else { try container.encode(value) }
        case .string(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        }
    }
}

extension JSONObject: Hashable {
    public func hash(into hasher: inout Hasher) {
        hasher.combine(pairs.count)
        for (key, value) in pairs {
            hasher.combine(key)
            hasher.combine(value)
        }
    }

    /// An object with the dictionary's keys in sorted order, so its encoding does not depend on hashing.
    public init(sortingKeysOf dictionary: [String: JSONValue]) {
        self.init()
        for (key, value) in dictionary.sorted(by: { $0.key < $1.key }) { appendParsed(key, value) }
    }
}

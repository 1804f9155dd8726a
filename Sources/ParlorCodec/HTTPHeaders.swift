/// HTTP header fields in the order they were received or added.
///
/// Names keep their original spelling (for faithful serialization); every lookup compares names
/// ASCII-case-insensitively, as HTTP requires.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (name: String, value: String)

    private var fields: [Element]

    public init() {
        fields = []
    }

    /// Room for `capacity` fields before the first reallocation (a request head has a handful).
    public init(minimumCapacity capacity: Int) {
        fields = []
        fields.reserveCapacity(capacity)
    }

    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { (name: $0.0, value: $0.1) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    public var count: Int { fields.count }

    public mutating func add(_ name: String, _ value: String) {
        fields.append((name: name, value: value))
    }

    /// Sets the value of the first field named `name` and removes any others; appends if there is none.
    public mutating func replaceOrAdd(_ name: String, _ value: String) {
        guard let first = fields.firstIndex(where: { ASCII.equalsIgnoringCase($0.name, name) }) else {
            add(name, value)
            return
        }
        fields[first].value = value
        var index = first + 1
        while index < fields.count {
            if ASCII.equalsIgnoringCase(fields[index].name, name) {
                fields.remove(at: index)
            } else {
                index += 1
            }
        }
    }

    /// Removes every field named `name`.
    public mutating func remove(_ name: String) {
        fields.removeAll { ASCII.equalsIgnoringCase($0.name, name) }
    }

    /// The first value of the field named `name`.
    public subscript(_ name: String) -> String? {
        fields.first { ASCII.equalsIgnoringCase($0.name, name) }?.value
    }

    /// Every value of the field named `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.compactMap { ASCII.equalsIgnoringCase($0.name, name) ? $0.value : nil }
    }

    public func contains(_ name: String) -> Bool {
        fields.contains { ASCII.equalsIgnoringCase($0.name, name) }
    }

    /// Comma-separated token list values across all fields named `name`, lowercased and trimmed,
    /// empty elements dropped (for list headers such as Connection, Upgrade and Transfer-Encoding).
    public func tokens(_ name: String) -> [String] {
        values(name).flatMap { value in
            value.utf8.split(separator: ASCII.comma).compactMap { element -> String? in
                let trimmed = ASCII.trimmingWhitespace(ArraySlice(element))
                guard !trimmed.isEmpty else { return nil }
                return String(decoding: trimmed.lazy.map(ASCII.lowercased), as: UTF8.self)
            }
        }
    }

    public func makeIterator() -> IndexingIterator<[Element]> {
        fields.makeIterator()
    }
}

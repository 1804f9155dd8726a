/// HTTP header fields in the order they were received or added.
///
/// Names keep their original spelling (for faithful serialization); every lookup compares names
/// ASCII-case-insensitively, as HTTP requires.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (name: String, value: String)

    fileprivate struct Field: Sendable {
        var name: String
        var value: String
        /// The name's length and its first and last bytes lowercased: a lookup passes over most fields on this
        /// alone, without touching their strings (a request head is looked up about ten times).
        let key: UInt32
    }

    private var fields: [Field]

    public init() {
        fields = []
    }

    /// Room for `capacity` fields before the first reallocation (a request head has a handful).
    public init(minimumCapacity capacity: Int) {
        fields = []
        fields.reserveCapacity(capacity)
    }

    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { Field(name: $0.0, value: $0.1, key: Self.key($0.0)) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    private static func key(_ name: String) -> UInt32 {
        // Through `withUTF8`: the generic `utf8.last` walked String's index machinery (~110 instructions a call, a
        // dozen calls per request).
        var name = name
        return name.withUTF8 { bytes in
            guard let first = bytes.first, let last = bytes.last else { return 0 }
            return UInt32(truncatingIfNeeded: bytes.count) << 16 | UInt32(ASCII.lowercased(first)) << 8 | UInt32(ASCII.lowercased(last))
        }
    }

    /// The index of the first field named `name` at or after `start`.
    private func index(of name: String, key: UInt32, from start: Int = 0) -> Int? {
        var index = start
        while index < fields.count {
            if fields[index].key == key, ASCII.equalsIgnoringCase(fields[index].name, name) { return index }
            index += 1
        }
        return nil
    }

    public var count: Int { fields.count }

    /// Room for `capacity` fields in all, so the next appends do not reallocate one by one.
    public mutating func reserveCapacity(_ capacity: Int) {
        fields.reserveCapacity(capacity)
    }

    public mutating func add(_ name: String, _ value: String) {
        fields.append(Field(name: name, value: value, key: Self.key(name)))
    }

    /// Sets the value of the first field named `name` and removes any others; appends if there is none.
    public mutating func replaceOrAdd(_ name: String, _ value: String) {
        let key = Self.key(name)
        guard let first = index(of: name, key: key) else {
            fields.append(Field(name: name, value: value, key: key))
            return
        }
        fields[first].value = value
        while let duplicate = index(of: name, key: key, from: first + 1) { fields.remove(at: duplicate) }
    }

    /// Removes every field named `name`.
    public mutating func remove(_ name: String) {
        let key = Self.key(name)
        fields.removeAll { $0.key == key && ASCII.equalsIgnoringCase($0.name, name) }
    }

    /// The first value of the field named `name`.
    public subscript(_ name: String) -> String? {
        index(of: name, key: Self.key(name)).map { fields[$0].value }
    }

    /// Every value of the field named `name`, in order.
    public func values(_ name: String) -> [String] {
        let key = Self.key(name)
        return fields.compactMap { $0.key == key && ASCII.equalsIgnoringCase($0.name, name) ? $0.value : nil }
    }

    /// How many fields are named `name`.
    public func count(of name: String) -> Int {
        let key = Self.key(name)
        var count = 0, start = 0
        while let found = index(of: name, key: key, from: start) {
            count += 1
            start = found + 1
        }
        return count
    }

    public func contains(_ name: String) -> Bool {
        index(of: name, key: Self.key(name)) != nil
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

    /// The bytes `appendLines` writes.
    var linesByteCount: Int {
        var total = 0
        for index in fields.indices { total += fields[index].name.utf8.count + fields[index].value.utf8.count + 4 }
        return total
    }

    /// `Name: value\r\n` per field, CR, LF and NUL in names and values turned into spaces: a value that reached us
    /// from a client must never be able to end the line and inject headers (response splitting).
    func appendLines(to bytes: inout [UInt8]) {
        for index in fields.indices {
            Self.appendSanitized(fields[index].name, to: &bytes)
            bytes.append(ASCII.colon)
            bytes.append(ASCII.space)
            Self.appendSanitized(fields[index].value, to: &bytes)
            bytes.append(ASCII.cr)
            bytes.append(ASCII.lf)
        }
    }

    private static func appendSanitized(_ text: String, to bytes: inout [UInt8]) {
        var text = text
        text.withUTF8 { utf8 in
            // Nearly every value is clean: check first, then copy in one go.
            guard ASCII.containsLineBreakOrNUL(utf8) else {
                bytes.append(contentsOf: utf8)
                return
            }
            for byte in utf8 {
                bytes.append(byte == ASCII.cr || byte == ASCII.lf || byte == 0 ? ASCII.space : byte)
            }
        }
    }

    public struct Iterator: IteratorProtocol {
        private var base: IndexingIterator<[Field]>

        fileprivate init(_ fields: [Field]) { base = fields.makeIterator() }

        public mutating func next() -> Element? {
            base.next().map { (name: $0.name, value: $0.value) }
        }
    }

    public func makeIterator() -> Iterator {
        Iterator(fields)
    }
}

/// Writes a JSON object field by field straight to bytes, so a value that is already encoded (a cached member
/// list, say) is spliced in as it is instead of being rebuilt as a `JSONValue` tree. The bytes are exactly what
/// `JSONValue.object` with the same fields in the same order encodes to.
public struct JSONObjectWriter {
    private var output: [UInt8]
    private var isEmpty = true

    public init(reservingCapacity capacity: Int = 128) {
        output = []
        output.reserveCapacity(capacity)
        output.append(UInt8(ascii: "{"))
    }

    public mutating func field(_ key: String, _ value: JSONValue) {
        writeKey(key)
        value.write(to: &output)
    }

    /// A field whose value is valid JSON already encoded.
    public mutating func field(_ key: String, encoded value: [UInt8]) {
        writeKey(key)
        output.append(contentsOf: value)
    }

    /// A string field (null for nil) under a key written in code, for the fields of every event and reply: no
    /// `JSONValue` is made, and the key is copied without looking for characters to escape.
    public mutating func field(_ key: StaticString, string value: String?) {
        writeKey(key)
        if let value { JSONValue.writeString(value, to: &output) } else { output.append(contentsOf: JSONValue.nullBytes) }
    }

    /// A whole-number field under a key written in code (see `field(_:string:)`).
    public mutating func field(_ key: StaticString, integer value: Int64) {
        writeKey(key)
        JSONValue.writeInteger(value, to: &output)
    }

    public consuming func finish() -> [UInt8] {
        output.append(UInt8(ascii: "}"))
        return output
    }

    private mutating func writeKey(_ key: String) {
        if !isEmpty { output.append(UInt8(ascii: ",")) }
        isEmpty = false
        JSONValue.writeString(key, to: &output)
        output.append(UInt8(ascii: ":"))
    }

    /// A key chosen in code: ASCII with nothing to escape (checked in debug builds).
    private mutating func writeKey(_ key: StaticString) {
        let bytes = UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
        assert(!bytes.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 >= 0x7F }, "a key that needs escaping")
        if !isEmpty { output.append(UInt8(ascii: ",")) }
        isEmpty = false
        output.append(UInt8(ascii: "\""))
        output.append(contentsOf: bytes)
        output.append(UInt8(ascii: "\""))
        output.append(UInt8(ascii: ":"))
    }
}

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
}

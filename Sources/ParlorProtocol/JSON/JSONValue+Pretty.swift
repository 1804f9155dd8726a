extension JSONValue {
    /// Indented JSON for documents people read (docs/openapi.json); the wire uses `encoded()`.
    public func prettyPrinted(indent: String = "  ") -> String {
        var output = ""
        writePretty(to: &output, level: 0, indent: indent)
        return output + "\n"
    }

    private func writePretty(to output: inout String, level: Int, indent: String) {
        let pad = String(repeating: indent, count: level + 1)
        let closingPad = String(repeating: indent, count: level)
        switch self {
        case .array(let elements) where !elements.isEmpty:
            output += "[\n"
            for (index, element) in elements.enumerated() {
                output += pad
                element.writePretty(to: &output, level: level + 1, indent: indent)
                output += index < elements.count - 1 ? ",\n" : "\n"
            }
            output += closingPad + "]"
        case .object(let object) where !object.isEmpty:
            output += "{\n"
            for (index, pair) in object.pairs.enumerated() {
                output += pad + JSONValue.string(pair.key).encodedString() + ": "
                pair.value.writePretty(to: &output, level: level + 1, indent: indent)
                output += index < object.pairs.count - 1 ? ",\n" : "\n"
            }
            output += closingPad + "}"
        default:
            output += encodedString()
        }
    }
}

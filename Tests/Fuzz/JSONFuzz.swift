// libFuzzer target for the JSON message decoder (JSONParser) and encoder (JSONWriter).
// Compiled with Sources/ParlorProtocol/JSON/{JSONParser,JSONValue,JSONWriter}.swift as module ParlorJSON
// (see run.sh); the input is the raw document. Checks:
// - no crash, no hang (libFuzzer -timeout), no stack exhaustion on deep nesting;
// - a parsed value nests no deeper than the limit, and a smaller limit accepts exactly the documents
//   that nest no deeper than it (with the same value);
// - what parses re-encodes to JSON that parses to an equal value, and re-encodes to the same bytes;
// - strings come out as the exact bytes (or escapes) of the input, so they are valid UTF-8.

enum JSONFuzz {
    static let smallDepth = 3

    static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("JSON invariant violated: \(message())") }
    }

    /// Nesting depth as the parser counts it: scalars 0, each array or object level 1.
    static func depth(_ value: JSONValue) -> Int {
        switch value {
        case .array(let elements): 1 + (elements.map(depth).max() ?? 0)
        case .object(let object): 1 + (object.pairs.map { depth($0.value) }.max() ?? 0)
        default: 0
        }
    }

    /// Equality that also tells numbers and strings apart byte for byte (String == is canonical equivalence).
    static func identical(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let x), .bool(let y)): x == y
        case (.number(let x), .number(let y)): x == y
        case (.string(let x), .string(let y)): x.utf8.elementsEqual(y.utf8)
        case (.array(let x), .array(let y)): x.count == y.count && zip(x, y).allSatisfy { identical($0, $1) }
        case (.object(let x), .object(let y)):
            x.pairs.count == y.pairs.count
                && zip(x.pairs, y.pairs).allSatisfy { $0.key.utf8.elementsEqual($1.key.utf8) && identical($0.value, $1.value) }
        default: false
        }
    }

    static func parse(_ bytes: [UInt8], maxDepth: Int = JSONParser.defaultMaxDepth) -> JSONValue? {
        do throws(JSONParseError) {
            return try JSONParser.parse(bytes, maxDepth: maxDepth)
        } catch {
            check(error.offset >= 0 && error.offset <= bytes.count, "error offset \(error.offset) outside 0...\(bytes.count)")
            return nil
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let parsed = JSONFuzz.parse(bytes)
    let small = JSONFuzz.parse(bytes, maxDepth: JSONFuzz.smallDepth)
    if let small {
        JSONFuzz.check(JSONFuzz.depth(small) <= JSONFuzz.smallDepth, "depth \(JSONFuzz.depth(small)) with limit \(JSONFuzz.smallDepth)")
        JSONFuzz.check(parsed.map { JSONFuzz.identical($0, small) } ?? false, "accepted with a small depth limit only, or differently")
    }
    guard let value = parsed else { return 0 }

    let depth = JSONFuzz.depth(value)
    JSONFuzz.check(depth <= JSONParser.defaultMaxDepth, "depth \(depth) with limit \(JSONParser.defaultMaxDepth)")
    JSONFuzz.check((small != nil) == (depth <= JSONFuzz.smallDepth),
                   "depth \(depth) \(small == nil ? "rejected" : "accepted") with limit \(JSONFuzz.smallDepth)")

    let encoded = value.encoded()
    JSONFuzz.check(encoded.count <= 6 * size + 32, "\(size) input bytes encode to \(encoded.count)")
    guard let reparsed = JSONFuzz.parse(encoded) else {
        fatalError("JSON invariant violated: the encoding does not parse: \(String(decoding: encoded, as: UTF8.self))")
    }
    JSONFuzz.check(reparsed == value && JSONFuzz.identical(reparsed, value),
                   "round trip changed the value: \(String(decoding: encoded, as: UTF8.self))")
    JSONFuzz.check(reparsed.encoded() == encoded, "re-encoding is not stable: \(String(decoding: encoded, as: UTF8.self))")
    JSONFuzz.check(value.encodedString().utf8.elementsEqual(encoded), "encodedString differs from encoded")
    return 0
}

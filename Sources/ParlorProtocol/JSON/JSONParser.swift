/// Why a document is not acceptable JSON, with the byte offset where that became clear.
public struct JSONParseError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public let offset: Int
    public var description: String { "\(message) at byte \(offset)" }
}

/// A strict RFC 8259 parser with a nesting limit, so hostile input cannot exhaust the stack.
public struct JSONParser {
    public static let defaultMaxDepth = 64

    public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { buffer throws(JSONParseError) in
            var parser = Cursor(bytes: buffer, maxDepth: maxDepth)
            parser.skipWhitespace()
            let value = try parser.parseValue(depth: 0)
            parser.skipWhitespace()
            guard parser.index == buffer.count else { throw parser.error("unexpected data after the JSON value") }
            return value
        }
    }

    public static func parse(_ string: String, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        try parse(Array(string.utf8), maxDepth: maxDepth)
    }

    private struct Cursor {
        let bytes: UnsafeBufferPointer<UInt8>
        let maxDepth: Int
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
            self.bytes = bytes
            self.maxDepth = maxDepth
        }

        func error(_ message: String) -> JSONParseError { JSONParseError(message: message, offset: index) }

        mutating func skipWhitespace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
                index += 1
            }
        }

        mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
            guard index < bytes.count else { throw error("unexpected end of JSON") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
            case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try parseString())
            case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
            case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
            case UInt8(ascii: "n"): try expectLiteral("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
            default: throw error("unexpected character")
            }
        }

        mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
            let count = literal.utf8CodeUnitCount
            guard index + count <= bytes.count else { throw error("unexpected end of JSON") }
            for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] {
                throw error("invalid literal")
            }
            index += count
        }

        mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
            guard depth <= maxDepth else { throw error("nesting deeper than \(maxDepth) levels") }
            index += 1
            var object = JSONObject()
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(object) }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a string key") }
                let key = try parseString()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
                index += 1
                skipWhitespace()
                object.appendParsed(key, try parseValue(depth: depth))
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end of JSON") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(object) }
                throw error("expected ',' or '}'")
            }
        }

        mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
            guard depth <= maxDepth else { throw error("nesting deeper than \(maxDepth) levels") }
            index += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            while true {
                skipWhitespace()
                elements.append(try parseValue(depth: depth))
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end of JSON") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
                throw error("expected ',' or ']'")
            }
        }

        mutating func parseNumber() throws(JSONParseError) -> Double {
            let start = index
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
            } else {
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            guard let value = Double(text), value.isFinite else { throw error("number out of range") }
            return value
        }

        func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

        mutating func parseString() throws(JSONParseError) -> String {
            index += 1  // opening quote
            let start = index
            // Fast path: no escapes. The bytes are ORed together on the way: an ASCII string needs no UTF-8
            // validation (the standard library's generic `String(validating:)` took ~1,000 instructions per string).
            var seen: UInt8 = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                    index += 1
                    return try string(slice, isASCII: seen < 0x80)
                }
                if byte == UInt8(ascii: "\\") { break }
                if byte < 0x20 { throw error("control character in string") }
                seen |= byte
                index += 1
            }
            var output = Array(bytes[start..<index])
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return try output.withUnsafeBufferPointer { unescaped throws(JSONParseError) in
                        try string(unescaped, isASCII: !unescaped.contains { $0 >= 0x80 })
                    }
                case UInt8(ascii: "\\"):
                    index += 1
                    guard index < bytes.count else { throw error("unexpected end of JSON") }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""): output.append(0x22)
                    case UInt8(ascii: "\\"): output.append(0x5C)
                    case UInt8(ascii: "/"): output.append(0x2F)
                    case UInt8(ascii: "b"): output.append(0x08)
                    case UInt8(ascii: "f"): output.append(0x0C)
                    case UInt8(ascii: "n"): output.append(0x0A)
                    case UInt8(ascii: "r"): output.append(0x0D)
                    case UInt8(ascii: "t"): output.append(0x09)
                    case UInt8(ascii: "u"): try appendUnicodeEscape(to: &output)
                    default: throw error("invalid escape")
                    }
                default:
                    if byte < 0x20 { throw error("control character in string") }
                    output.append(byte)
                    index += 1
                }
            }
            throw error("unterminated string")
        }

        /// The string of `bytes`; an error unless they are valid UTF-8 (ASCII always is).
        func string(_ bytes: UnsafeBufferPointer<UInt8>, isASCII: Bool) throws(JSONParseError) -> String {
            if isASCII { return String(decoding: bytes, as: UTF8.self) }
            guard let string = String(validating: bytes, as: UTF8.self) else { throw error("string is not valid UTF-8") }
            return string
        }

        mutating func readHex4() throws(JSONParseError) -> UInt32 {
            guard index + 4 <= bytes.count else { throw error("invalid \\u escape") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt32
                switch byte {
                case 0x30...0x39: digit = UInt32(byte - 0x30)
                case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
                case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
                default: throw error("invalid \\u escape")
                }
                value = value << 4 | digit
                index += 1
            }
            return value
        }

        mutating func appendUnicodeEscape(to output: inout [UInt8]) throws(JSONParseError) {
            var scalar = try readHex4()
            if (0xD800...0xDBFF).contains(scalar) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw error("unpaired surrogate in \\u escape")
                }
                index += 2
                let low = try readHex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate in \\u escape") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw error("unpaired surrogate in \\u escape")
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid \\u escape") }
            output.append(contentsOf: Array(String(Character(unicode)).utf8))
        }
    }
}

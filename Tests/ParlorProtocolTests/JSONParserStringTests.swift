import ParlorProtocol
import Testing

/// Strings in the parser: ASCII takes a path without UTF-8 validation, anything else is validated, with or without
/// escapes, so a string the parser returns is always the UTF-8 that was sent.
@Suite struct JSONParserStringTests {
    private static func parsedString(_ bytes: [UInt8]) throws -> String? {
        guard case .string(let string) = try JSONParser.parse(bytes) else { return nil }
        return string
    }

    private static func quoted(_ inner: [UInt8]) -> [UInt8] { [0x22] + inner + [0x22] }

    @Test(arguments: ["", "plain", "MEM-77ab", "é", "naïve café", "👋 hi", "\u{7F}"])
    func validStringsComeBackAsSent(_ value: String) throws {
        #expect(try Self.parsedString(Self.quoted(Array(value.utf8))) == value)
        // The same after an escape, which takes the other path.
        #expect(try Self.parsedString(Self.quoted(Array("\\n".utf8) + Array(value.utf8))) == "\n" + value)
    }

    @Test(arguments: [
        [0xFF], [0xC3], [0x61, 0xC3], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x80, 0x61],
    ] as [[UInt8]])
    func invalidUTF8IsAnError(_ inner: [UInt8]) {
        #expect(throws: JSONParseError.self) { try Self.parsedString(Self.quoted(inner)) }
        #expect(throws: JSONParseError.self) { try Self.parsedString(Self.quoted(Array("\\t".utf8) + inner)) }
    }

    @Test func escapesDecodeToTheirCharacters() throws {
        #expect(try Self.parsedString(Array(#""a\"b\\c\/d\u00e9\ud83d\udc4b""#.utf8)) == "a\"b\\c/dé👋")
    }
}

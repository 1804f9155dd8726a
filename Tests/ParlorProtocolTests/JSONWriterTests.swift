import Foundation
import ParlorProtocol
import Testing

/// The JSON writer's fast paths (numbers written digit by digit, strings copied whole when nothing needs escaping)
/// give what Foundation reads back, byte for byte where the form is fixed.
@Suite struct JSONWriterTests {
    static func text(_ value: JSONValue) -> String { String(decoding: value.encoded(), as: UTF8.self) }

    @Test(arguments: [0, 1, -1, 9, 10, -10, 1_796_144_078_000, -8_999_999_999_999_999, 8_999_999_999_999_999] as [Int64])
    func integersAreWrittenAsTheirDecimalDigits(_ value: Int64) {
        #expect(Self.text(.number(Double(value))) == String(Int64(Double(value))))
    }

    @Test func otherNumbersAndConstants() {
        #expect(Self.text(.number(0.5)) == "0.5")
        #expect(Self.text(.number(.infinity)) == "null")
        #expect(Self.text(.number(9.5e15)) == String(9.5e15))
        #expect(Self.text(.array([.null, .bool(true), .bool(false)])) == "[null,true,false]")
    }

    @Test func stringsReadBackAsTheyWere() throws {
        for value in ["", "plain", "MEM-77ab", "é 👋 \u{2028}", "quote \" and \\ back", "line\nbreak\ttab\r\u{01}\u{7F}"] {
            let encoded = JSONValue.string(value).encoded()
            #expect(try JSONSerialization.jsonObject(with: Data(encoded), options: .fragmentsAllowed) as? String == value)
        }
        #expect(Self.text(.string("a\"b")) == #""a\"b""#)
    }

    /// Strings are checked for what needs escaping eight bytes at a time: every such byte, at every position of two
    /// words and a tail, beside ASCII or beside multi-byte characters, comes back as it was.
    @Test func everyEscapedByteIsFoundWhereverItStands() throws {
        let specials = (0..<0x20).map { UnicodeScalar(UInt8($0)) } + ["\"", "\\", "\u{7F}"]
        for filler in ["a", "é"] {
            for special in specials {
                for position in 0..<19 {
                    var characters = Array(repeating: Character(filler), count: 19)
                    characters[position] = Character(special)
                    let value = String(characters)
                    let encoded = JSONValue.string(value).encoded()
                    #expect(try JSONParser.parse(encoded) == .string(value), "\(special.value) at \(position) beside \(filler)")
                }
            }
        }
    }
}

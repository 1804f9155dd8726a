import Foundation
import Testing
@testable import ParlorLoop

/// The log line formats, byte for byte: the access log builds one per request straight into bytes, so the escaping
/// is checked here against JSONSerialization, which reads every quoted value back.
@Suite struct LoggerLineTests {
    static let awkward = "a \"quoted\" \\ back\nslash\r\t\u{01}\u{7F} é 👋 \u{2028}\u{2029} end"

    @Test func textLinesQuoteOnlyWhatNeedsIt() throws {
        let logger = Logger(level: .info, format: .text)
        let line = try #require(logger.line(.info, "request", ["path": "/rooms", "status": "200", "empty": "", "eq": "a=b"]))
        #expect(line == #"level=info msg=request path=/rooms status=200 empty="" eq="a=b""# + "\n")
        #expect(logger.line(.debug, "hidden") == nil)
    }

    @Test func aQuotedTextValueReadsBackAsJSON() throws {
        let line = try #require(Logger(level: .info, format: .text).line(.warning, "x", ["value": Self.awkward]))
        let quoted = try #require(line.range(of: "value=")).upperBound
        let literal = String(line[quoted...].dropLast())  // the newline
        #expect(try JSONSerialization.jsonObject(with: Data(literal.utf8), options: .fragmentsAllowed) as? String == Self.awkward)
        #expect(!literal.contains("\u{2028}") && !literal.contains("\u{2029}") && !literal.contains("\n"))
    }

    @Test func jsonLinesParseAndKeepNumbersNumeric() throws {
        let line = try #require(Logger(level: .info, format: .json).line(.error, Self.awkward, ["status": "404", "bytes": "01", "path": Self.awkward]))
        #expect(line.hasSuffix("}\n") && line.filter { $0 == "\n" }.count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["message"] as? String == Self.awkward)
        #expect(object["path"] as? String == Self.awkward)
        #expect(object["level"] as? String == "error")
        #expect(object["status"] as? Int == 404)
        #expect(object["bytes"] as? String == "01")  // not a JSON number: kept as a string
        let time = try #require(object["time"] as? String)
        #expect(time.count == 24 && time.hasSuffix("Z") && time.dropFirst(10).first == "T", "\(time)")
    }

    @Test func digitsArePaddedToTheirWidth() {
        var out: [UInt8] = []
        Logger.appendDigits(7, width: 3, to: &out)
        Logger.appendDigits(2026, width: 2, to: &out)
        Logger.appendDigits(0, width: 1, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == "00720260")
    }
}

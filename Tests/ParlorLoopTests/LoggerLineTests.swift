import Foundation
import Testing
@testable import ParlorBasics

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
        out = []
        Logger.appendDigits(UInt64.max, to: &out)
        Logger.appendDigits(0, width: 4, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == "\(UInt64.max)0000")
    }

    /// The access log's field-by-field writer gives the bytes of the generic line with the same values as strings.
    @Test func theLineWriterWritesWhatAppendLineWrites() {
        for format in Logger.Format.allCases {
            let logger = Logger(level: .info, format: format)
            for (status, micros, path) in [(200, UInt64(0), "/rooms"), (404, 1_234_567, Self.awkward), (503, 999, "")] {
                var generic: [UInt8] = [], written: [UInt8] = []
                logger.appendLine(.info, "request", ["method": "GET", "path": path, "status": String(status),
                                                     "bytes": String(5721), "duration_ms": Self.milliseconds(micros)],
                                  to: &generic)
                let line = logger.beginLine(.info, "request", to: &written)
                line.text("method", "GET", to: &written)
                line.text("path", path, to: &written)
                line.integer("status", status, to: &written)
                line.integer("bytes", 5721, to: &written)
                line.milliseconds("duration_ms", micros: micros, to: &written)
                line.end(to: &written)
                #expect(Self.withoutTime(written) == Self.withoutTime(generic), "\(format) \(status)")
            }
        }
    }

    static func milliseconds(_ micros: UInt64) -> String {
        let fraction = String(micros % 1000)
        return "\(micros / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    /// JSON lines start with the wall-clock time, which may tick between two lines.
    static func withoutTime(_ line: [UInt8]) -> String {
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix(#"{"time":""#) else { return text }
        return String(text.dropFirst(#"{"time":""#.count + 24))
    }
}

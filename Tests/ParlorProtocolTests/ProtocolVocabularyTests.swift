import Foundation
import ParlorProtocol
import Testing

/// The wire vocabulary has one home: every enum case is documented in docs/protocol.md, every documented name is
/// a case, and no wire string is spelled a second time anywhere in the server's or the client's Swift sources.
@Suite struct ProtocolVocabularyTests {
    static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func everyRequestTypeIsInTheDocTableAndNothingElse() throws {
        let documented = try Self.table(under: "### Request types").map(\.name)
        #expect(documented.count == Set(documented).count, "a request type is listed twice")
        #expect(Set(documented) == Set(RequestType.allCases.map(\.rawValue)))
    }

    @Test func everyEventTypeIsInTheDocTableAndNothingElse() throws {
        let documented = try Self.table(under: "### Event types").map(\.name)
        #expect(documented.count == Set(documented).count, "an event type is listed twice")
        #expect(Set(documented) == Set(EventType.allCases.map(\.rawValue)))
    }

    @Test func everyErrorCodeIsInTheDocTableWithItsHTTPStatus() throws {
        let rows = try Self.table(under: "### Error codes")
        #expect(rows.count == Set(rows.map(\.name)).count, "an error code is listed twice")
        let documented = Dictionary(rows.map { ($0.name, Int($0.cells[2].prefix { $0.isNumber })) }, uniquingKeysWith: { first, _ in first })
        let declared = Set(ErrorCode.allCases.map(\.rawValue))
        #expect(Set(documented.keys).subtracting(declared).isEmpty, "documented but not an ErrorCode")
        #expect(declared.subtracting(documented.keys).isEmpty, "ErrorCode cases missing from the table")
        for code in ErrorCode.allCases where documented[code.rawValue] != nil {
            #expect(documented[code.rawValue] == code.httpStatus, "\(code.rawValue): the table's status differs")
        }
    }

    @Test func everyClientErrorCodeIsInTheDocTableAndNothingElse() throws {
        let documented = try Self.table(under: "### Client error codes").map(\.name)
        #expect(documented.count == Set(documented).count)
        #expect(Set(documented) == Set(ClientErrorCode.allCases.map(\.rawValue)))
    }

    @Test func eventTypesRoundTripThroughTheirWireNames() {
        for type in EventType.allCases { #expect(EventType(rawValue: type.rawValue) == type) }
        #expect(EventType(rawValue: "member:unknown") == nil)
    }

    @Test func noCodeIsUsedByTwoCases() {
        let codes = ErrorCode.allCases.map(\.rawValue) + ClientErrorCode.allCases.map(\.rawValue)
        #expect(codes.count == Set(codes).count)
    }

    @Test func everyWireStringIsSpelledOnceInTheSwiftSources() throws {
        let sources = try Self.swiftSources()
        #expect(sources.count > 100, "the scan found too few files to mean anything")
        #expect(sources.keys.contains { $0.hasSuffix("ParlorProtocol/ErrorCode.swift") })
        var spellings: [String: [String]] = [:]
        for (path, text) in sources {
            for literal in Self.stringLiterals(in: text) { spellings[literal, default: []].append(path) }
        }
        let wireStrings = RequestType.allCases.map(\.rawValue) + EventType.allCases.map(\.rawValue)
            + ErrorCode.allCases.map(\.rawValue) + ClientErrorCode.allCases.map(\.rawValue)
        for wire in Set(wireStrings).sorted() {
            let places = spellings[wire] ?? []
            #expect(places.count == 1, "\"\(wire)\" is spelled \(places.count) times: \(places.sorted())")
        }
    }

    /// The scan itself: a second spelling is counted, comments are not.
    @Test func theScanCountsEverySpellingOutsideComments() {
        let text = """
            let a = "room:error:not-found"
            /// "room:error:not-found" in a doc comment
            throw RoomError("room:error:not-found", "again \\(x)")
            """
        let literals = Self.stringLiterals(in: text)
        #expect(literals.filter { $0 == "room:error:not-found" }.count == 2)
        #expect(!literals.contains("room:error:closed"))
    }

    // MARK: - Helpers

    struct Row {
        let cells: [String]
        var name: String { cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`")) }
    }

    /// The rows of the first table after `heading` in docs/protocol.md, header and separator left out.
    static func table(under heading: String) throws -> [Row] {
        let text = try String(contentsOf: root.appending(path: "docs/protocol.md"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex(of: heading), "docs/protocol.md has no \(heading)")
        let rows = lines[(start + 1)...].drop { !$0.hasPrefix("|") }.prefix { $0.hasPrefix("|") }.dropFirst(2)
        let parsed = rows.map { line in
            Row(cells: line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) })
        }
        #expect(!parsed.isEmpty, "the table under \(heading) is empty")
        return parsed
    }

    /// Every Swift file of the server and the client (ParlorBench, a load generator, keeps its own strings).
    static func swiftSources() throws -> [String: String] {
        let sources = root.appending(path: "Sources")
        var files: [String: String] = [:]
        let enumerator = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        for case let url as URL in enumerator where url.pathExtension == "swift" && !url.path.contains("/Sources/ParlorBench/") {
            files[url.path] = try String(contentsOf: url, encoding: .utf8)
        }
        return files
    }

    /// The string literals on the lines of `text` that are not comments (escaped quotes are rare enough in
    /// these sources to ignore: they can only split a literal, never make one wire string out of two).
    static func stringLiterals(in text: String) -> [String] {
        var literals: [String] = []
        for line in text.split(separator: "\n") where !line.drop(while: { $0 == " " }).hasPrefix("//") {
            let pieces = line.split(separator: "\"", omittingEmptySubsequences: false)
            for index in stride(from: 1, to: pieces.count - 1, by: 2) { literals.append(String(pieces[index])) }
        }
        return literals
    }
}

import Testing
@testable import ParlorCodec

/// The head-line parsers work on raw buffers for speed; here they are compared with the plain definitions they
/// replaced (split on spaces, `allSatisfy` over slices) on many generated lines, valid and broken, so the fast
/// code accepts, refuses and explains exactly what the plain code did.
@Suite struct HTTPHeadLineReferenceTests {
    /// `field-name ":" OWS field-value OWS`, as first written.
    static func referenceHeaderLine(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> (String, String) {
        if let first = line.first, ASCII.isWhitespace(first) { throw .malformed("Header line folding (obs-fold) is not allowed.") }
        guard let colon = line.firstIndex(of: ASCII.colon) else { throw .malformed("A header line has no colon.") }
        let name = line[..<colon]
        guard !name.isEmpty else { throw .malformed("A header line has an empty name.") }
        guard name.allSatisfy(ASCII.isTokenChar) else {
            if let last = name.last, ASCII.isWhitespace(last) {
                throw .malformed("Whitespace between a header name and the colon is not allowed.")
            }
            throw .malformed("A header name contains characters that are not allowed.")
        }
        let value = ASCII.trimmingWhitespace(line[(colon + 1)...])
        guard value.allSatisfy({ $0 >= ASCII.space ? $0 != 0x7F : $0 == ASCII.tab }) else {
            throw .malformed("The value of header \"\(String(decoding: name, as: UTF8.self))\" contains control characters.")
        }
        return (String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
    }

    /// The request line's three parts, as first split.
    static func referenceParts(_ line: ArraySlice<UInt8>) -> [ArraySlice<UInt8>]? {
        let parts = line.split(separator: ASCII.space, omittingEmptySubsequences: false)
        return parts.count == 3 ? parts : nil
    }

    static func outcome<T>(_ body: () throws(HTTPParseError) -> T) -> String {
        do { return "ok \(try body())" } catch { return "error \(error)" }
    }

    /// Lines built from pieces that matter to the grammar: names, separators, spaces, tabs, controls, DEL, UTF-8.
    static func generatedLines(count: Int) -> [[UInt8]] {
        let pieces: [[UInt8]] = ["Host", "X-A", "a", ":", " ", "\t", "value", "\u{1}", "\u{7F}", "é", "(", "", "::", "Bearer x.y"]
            .map { Array($0.utf8) }
        var generator = SplitMix64(seed: 0x5EED)
        return (0..<count).map { _ in
            (0..<Int(generator.next() % 6)).flatMap { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }
        }
    }

    static let refusals = ["folding", "no colon", "empty name", "Whitespace between", "name contains", "control characters"]

    /// The token-character bit set against RFC 9110's `tchar` list, for every byte value.
    @Test func tokenCharsReferenceTest() {
        let tchar = Set(Array("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8))
        for byte in UInt8.min...UInt8.max {
            #expect(ASCII.isTokenChar(byte) == tchar.contains(byte), "byte \(byte)")
        }
    }

    /// The word-at-a-time checks (field-value controls, CR/LF/NUL) against byte-by-byte ones, on values of every length up to 40 and at
    /// every offset, built from the bytes around the limits (tab, controls, space, DEL, 0x80, 0xFF).
    @Test func wordAtATimeChecksFindWhatByteByByteFinds() {
        let interesting: [UInt8] = [0x00, 0x01, 0x09, 0x0A, 0x1F, 0x20, 0x41, 0x7E, 0x7F, 0x80, 0x9F, 0xA0, 0xFF]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for length in 0...40 {
            for _ in 0..<200 {
                var value = [UInt8](repeating: 0x61, count: length)
                for index in value.indices {
                    state = state &* 6364136223846793005 &+ 1442695040888963407
                    if state >> 61 == 0 { value[index] = interesting[Int((state >> 33) % UInt64(interesting.count))] }
                }
                let plain = value.contains { $0 < ASCII.space ? $0 != ASCII.tab : $0 == 0x7F }
                #expect(value.withUnsafeBufferPointer(ASCII.containsFieldValueControl) == plain, "\(value)")
                let lineBreak = value.contains { $0 == ASCII.cr || $0 == ASCII.lf || $0 == 0 }
                #expect(value.withUnsafeBufferPointer(ASCII.containsLineBreakOrNUL) == lineBreak, "\(value)")
            }
        }
    }

    @Test func headerLinesMatchTheReference() {
        var kinds = Set<String>()
        for line in Self.generatedLines(count: 5_000) {
            let fast = Self.outcome { () throws(HTTPParseError) in try HTTPRequestParser.parseHeaderLine(line[...]) }
            let reference = Self.outcome { () throws(HTTPParseError) in try Self.referenceHeaderLine(line[...]) }
            #expect(fast == reference, "\(String(decoding: line, as: UTF8.self).debugDescription)")
            kinds.insert(fast.hasPrefix("ok") ? "ok" : Self.refusals.first { fast.contains($0) } ?? fast)
        }
        // The generated lines reach every outcome: accepted, and each of the six refusals.
        #expect(kinds == Set(["ok"] + Self.refusals), "\(kinds)")
    }

    @Test func requestLinesAreSplitAsTheReferenceSplitsThem() {
        let pieces = ["GET", " ", "/rooms", "?a=b", "HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "  ", "x"]
        var generator = SplitMix64(seed: 0xBEEF)
        for _ in 0..<5_000 {
            let line = Array((0..<Int(generator.next() % 7)).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }.joined().utf8)
            let fast = Self.outcome { () throws(HTTPParseError) in try HTTPRequestParser.parseRequestLine(line[...]) }
            let threeParts = Self.referenceParts(line[...]) != nil
            // Whatever else fails, the single-spaces error comes exactly when the reference split does not give three parts.
            let splitError = fast.contains("separated by single spaces")
            #expect(splitError == !threeParts, "\(String(decoding: line, as: UTF8.self).debugDescription): \(fast)")
        }
    }

    @Test func versionsParseAsBefore() throws {
        #expect(try HTTPRequestParser.parseVersion(Array("HTTP/1.1".utf8)[...]) == 1)
        #expect(try HTTPRequestParser.parseVersion(Array("HTTP/1.0".utf8)[...]) == 0)
        #expect(throws: HTTPParseError.self) { try HTTPRequestParser.parseVersion(Array("HTTP/1.1 ".utf8)[...]) }
        #expect(throws: HTTPParseError.self) { try HTTPRequestParser.parseVersion(Array("HTTP/2.0".utf8)[...]) }
    }
}

/// A small deterministic generator (SplitMix64) so a failure replays.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

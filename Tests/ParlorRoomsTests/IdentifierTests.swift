import Testing
@testable import ParlorRooms

@Suite struct IdentifierTests {
    /// The plain definition the byte writer replaced.
    private static func reference(_ prefix: String, _ high: UInt64, _ low: UInt64) -> String {
        func hex(_ value: UInt64) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
        return "\(prefix)-\(hex(high))\(hex(low))"
    }

    @Test(arguments: [(UInt64(0), UInt64(0)), (.max, .max), (0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210), (1, 0x8000_0000_0000_0000)])
    func formatIsThePrefixAndThirtyTwoLowercaseHexDigits(high: UInt64, low: UInt64) {
        for prefix in [Identifier.member, Identifier.session, Identifier.node, "WH", ""] {
            #expect(Identifier.format(prefix, high: high, low: low) == Self.reference(prefix, high, low))
        }
    }

    @Test func idsAreWellFormedAndDistinct() {
        let ids = (0..<2000).map { _ in Identifier.make(Identifier.member) }
        #expect(Set(ids).count == ids.count)
        for id in ids {
            #expect(id.hasPrefix("MEM-") && id.utf8.count == 36)
            #expect(id.utf8.dropFirst(4).allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) })
        }
        // 128 random bits: across 2,000 ids every hex position takes many values (a constant word would not).
        for position in 4..<36 {
            let digits = Set(ids.map { Array($0.utf8)[position] })
            #expect(digits.count >= 12, "position \(position) took only \(digits.count) values")
        }
    }

    @Test func timeOrderedIdsSortByTheirMillisecondAndKeepEightyRandomBits() {
        let start: Int64 = 1_796_000_000_000
        let ids = (0..<2000).map { Identifier.makeTimeOrdered(Identifier.member, milliseconds: start + Int64($0 / 100)) }
        #expect(Set(ids).count == ids.count)
        for (index, id) in ids.enumerated() {
            #expect(id.hasPrefix("MEM-") && id.utf8.count == 36)
            // The first 12 hex digits are the millisecond, so a later millisecond sorts after every earlier one.
            #expect(Int64(id.dropFirst(4).prefix(12), radix: 16) == start + Int64(index / 100))
            if index >= 100 { #expect(ids[index - 100] < id) }
        }
        // The other 20 digits are random: within one millisecond, each position takes many values.
        let sameMillisecond = Array(ids.prefix(100))
        for position in 16..<36 {
            let digits = Set(sameMillisecond.map { Array($0.utf8)[position] })
            #expect(digits.count >= 8, "position \(position) took only \(digits.count) values")
        }
    }

    @Test func timeOrderedIdsClampTimesOutsideFortyEightBits() {
        #expect(Identifier.makeTimeOrdered("MEM", milliseconds: -5).dropFirst(4).hasPrefix("000000000000"))
        #expect(Identifier.makeTimeOrdered("MEM", milliseconds: .max).dropFirst(4).hasPrefix("ffffffffffff"))
    }
}

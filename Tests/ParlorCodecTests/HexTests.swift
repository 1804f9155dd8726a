import Testing
import ParlorCodec

@Suite struct HexTests {
    @Test func everyByteIsTwoLowercaseDigits() {
        let all = [UInt8](0...255)
        let expected = all.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        #expect(Hex.encode(all) == expected)
        #expect(Hex.encode(all[250...]) == "fafbfcfdfeff")  // the generic entry: any sequence of bytes
        #expect(Hex.encode([UInt8]()) == "")
    }
}

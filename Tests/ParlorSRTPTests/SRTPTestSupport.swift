@testable import ParlorSRTP

/// Hex in the RFCs' spelling (upper or lower case, spaces and line breaks ignored) to bytes.
func hexBytes(_ text: String) -> [UInt8] {
    let digits = text.filter { !$0.isWhitespace }
    precondition(digits.count % 2 == 0, "odd hex length")
    var bytes: [UInt8] = []
    var index = digits.startIndex
    while index < digits.endIndex {
        let next = digits.index(index, offsetBy: 2)
        bytes.append(UInt8(digits[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}

/// A small deterministic generator (SplitMix64), so a failing case can be run again.
struct SeededGenerator: RandomNumberGenerator {
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

enum TestPackets {
    /// An RTP packet: V=2, payload type 111, `sequence`, timestamp, `ssrc`, optional CSRCs and a one-byte-header
    /// extension, then `payload`.
    static func rtp(sequence: UInt16, ssrc: UInt32, payload: [UInt8], csrcCount: Int = 0, extensionWords: Int = 0) -> [UInt8] {
        var packet: [UInt8] = [0x80 | UInt8(csrcCount) | (extensionWords > 0 ? 0x10 : 0), 111,
                               UInt8(sequence >> 8), UInt8(truncatingIfNeeded: sequence), 0x00, 0x01, 0xE2, 0x40]
        packet += bigEndian(ssrc)
        for csrc in 0..<csrcCount { packet += bigEndian(UInt32(0x1000 + csrc)) }
        if extensionWords > 0 {
            packet += [0xBE, 0xDE, 0, UInt8(extensionWords)]
            for word in 0..<extensionWords { packet += [0x10, UInt8(word), 0, 0] }
        }
        return packet + payload
    }

    /// A sender report (RTCP PT 200) from `ssrc` with `extra` bytes of body after the 24 bytes of sender info.
    static func rtcp(ssrc: UInt32, body: [UInt8]) -> [UInt8] {
        let words = (8 + body.count) / 4 - 1
        return [0x80, 200, UInt8(words >> 8), UInt8(truncatingIfNeeded: words)] + bigEndian(ssrc) + body
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    static func keyingMaterial(_ profile: SRTPProtectionProfile, seed: UInt8) -> [UInt8] {
        (0..<profile.keyingMaterialLength).map { UInt8(truncatingIfNeeded: Int(seed) &* 31 &+ $0 &* 7) }
    }
}

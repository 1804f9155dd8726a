@testable import ParlorMediaLink

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

/// Two nodes' ends of one link, each set up the way a node will: a fresh key pair, a signed offer, the peer's
/// offer verified, the keys derived.
struct LinkEnds {
    static let secret = try! MediaLinkSecret(Array("a cluster link secret of 32 byte".utf8))
    static let now: Int64 = 1_780_000_000_000

    let aOffer: LinkOffer
    let bOffer: LinkOffer
    let aKeys: MediaLinkKeys
    let bKeys: MediaLinkKeys

    init(aID: String = "node-a", bID: String = "node-b") throws {
        let aPair = try X25519KeyPair(), bPair = try X25519KeyPair()
        aOffer = try LinkOffer.make(nodeID: aID, keyPair: aPair, createdAtMilliseconds: Self.now)
        bOffer = try LinkOffer.make(nodeID: bID, keyPair: bPair, createdAtMilliseconds: Self.now)
        // Through the database's bytes, as the nodes will.
        let aSeenByB = try LinkOffer.verify(aOffer.signed(with: Self.secret), secret: Self.secret, nowMilliseconds: Self.now, maxAgeMilliseconds: 60_000)
        let bSeenByA = try LinkOffer.verify(bOffer.signed(with: Self.secret), secret: Self.secret, nowMilliseconds: Self.now, maxAgeMilliseconds: 60_000)
        aKeys = try MediaLinkKeys.derive(localOffer: aOffer, localKeyPair: aPair, remoteOffer: bSeenByA)
        bKeys = try MediaLinkKeys.derive(localOffer: bOffer, localKeyPair: bPair, remoteOffer: aSeenByB)
    }
}

/// An RTP-shaped packet: V=2, payload type 111, `sequence`, then `payloadLength` bytes.
func rtpPacket(sequence: UInt16, payloadLength: Int = 40) -> [UInt8] {
    [0x80, 111, UInt8(sequence >> 8), UInt8(truncatingIfNeeded: sequence), 0, 0, 0x03, 0xC0, 0x12, 0x34, 0x56, 0x78]
        + (0..<payloadLength).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(sequence)) }
}

/// The error `body` threw, or nil if it returned.
func thrownError<E: Error, T>(_ body: () throws(E) -> T) -> E? {
    do throws(E) {
        _ = try body()
        return nil
    } catch {
        return error
    }
}

import Testing
@testable import ParlorMediaLink

@Suite struct LinkOfferTests {
    static let secret = LinkEnds.secret
    static let now = LinkEnds.now
    static let key = (0..<32).map { UInt8($0) }

    static func offer(nodeID: String = "node-a", createdAt: Int64 = now) throws(LinkOfferError) -> LinkOffer {
        try LinkOffer(nodeID: nodeID, epoch: 0xA1B2_C3D4, publicKey: key, createdAtMilliseconds: createdAt)
    }

    static func verify(_ bytes: [UInt8], secret: MediaLinkSecret = secret, now: Int64 = now) -> Result<LinkOffer, LinkOfferError> {
        Result { () throws(LinkOfferError) in try LinkOffer.verify(bytes, secret: secret, nowMilliseconds: now, maxAgeMilliseconds: 60_000) }
    }

    /// The documented layout, byte for byte, and the MAC over the label and the fields.
    @Test func encodingIsTheDocumentedLayout() throws {
        let signed = try Self.offer().signed(with: Self.secret)
        let fields: [UInt8] = [1, 6] + Array("node-a".utf8) + [0xA1, 0xB2, 0xC3, 0xD4]
            + [0x00, 0x00, 0x01, 0x9E, 0x70, 0x44, 0x88, 0x00] + Self.key
        #expect(signed.count == 78 + 6)
        #expect(Array(signed.prefix(fields.count)) == fields)
        #expect(Array(signed.suffix(32)) == HMACSHA256.authenticate(Array("parlor-media-link-offer".utf8) + fields, key: Self.secret.bytes))
    }

    @Test func signedOfferVerifies() throws {
        let offer = try Self.offer(nodeID: "nœud-é")
        #expect(try Self.verify(offer.signed(with: Self.secret)).get() == offer)
        let made = try LinkOffer.make(nodeID: "n", keyPair: X25519KeyPair(), createdAtMilliseconds: Self.now)
        #expect(try Self.verify(made.signed(with: Self.secret)).get() == made)
    }

    @Test func wrongSecretIsRefused() throws {
        let signed = try Self.offer().signed(with: Self.secret)
        let other = try MediaLinkSecret(Array("another secret, also 32 bytes!!!".utf8))
        #expect(Self.verify(signed, secret: other) == .failure(.badSignature))
    }

    /// Every single-bit change anywhere, fields or MAC, is refused; none is read as a different valid offer.
    @Test func everyTamperedBitIsRefused() throws {
        let signed = try Self.offer().signed(with: Self.secret)
        for index in signed.indices {
            for bit in 0..<8 {
                var tampered = signed
                tampered[index] ^= 1 << bit
                guard case .failure(let error) = Self.verify(tampered) else {
                    Issue.record("bit \(bit) of byte \(index) changed and still accepted")
                    continue
                }
                // The version and length bytes fail on shape; everything else on the signature.
                if index >= 2 { #expect(error == .badSignature, "byte \(index) bit \(bit): \(error)") }
            }
        }
    }

    @Test func freshnessWindow() throws {
        func result(createdAt: Int64) throws -> Result<LinkOffer, LinkOfferError> { try Self.verify(Self.offer(createdAt: createdAt).signed(with: Self.secret)) }
        #expect(try result(createdAt: Self.now - 60_000).get().createdAtMilliseconds == Self.now - 60_000)
        #expect(try result(createdAt: Self.now - 60_001) == .failure(.stale(ageMilliseconds: 60_001)))
        #expect(try result(createdAt: Self.now + 5_000).get().createdAtMilliseconds == Self.now + 5_000)
        #expect(try result(createdAt: Self.now + 5_001) == .failure(.fromTheFuture(aheadMilliseconds: 5_001)))
        // The ends of Int64 neither trap nor pass.
        #expect(try result(createdAt: .min) == .failure(.stale(ageMilliseconds: .max)))
        #expect(try result(createdAt: .max) == .failure(.fromTheFuture(aheadMilliseconds: .max - Self.now)))
        #expect(try Self.verify(Self.offer(createdAt: .max).signed(with: Self.secret), now: -1) == .failure(.fromTheFuture(aheadMilliseconds: .max)))
    }

    @Test func malformedBytesAreRefusedWithoutTrapping() throws {
        let signed = try Self.offer().signed(with: Self.secret)
        #expect(Self.verify([]) == .failure(.malformed("0 bytes, too short")))
        #expect(Self.verify([1]) == .failure(.malformed("1 bytes, too short")))
        #expect(Self.verify([2] + signed.dropFirst()) == .failure(.unsupportedVersion(2)))
        #expect(Self.verify(signed + [0]) == .failure(.malformed("85 bytes, expected 84 for a node id of 6 bytes")))
        #expect(Self.verify(Array(signed.dropLast())) == .failure(.malformed("83 bytes, expected 84 for a node id of 6 bytes")))
        var noNodeID = signed
        noNodeID[1] = 0
        #expect(Self.verify(noNodeID) == .failure(.malformed("empty node id")))
        // Random bytes of every length up to 400 (a version byte of 1 in front half the time): always refused.
        var generator = SeededGenerator(seed: 41)
        for length in 0...400 {
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if length > 0, Bool.random(using: &generator) { bytes[0] = 1 }
            if case .success = Self.verify(bytes) { Issue.record("accepted \(length) random bytes") }
        }
        // A megabyte is refused on its length alone.
        #expect(Self.verify([1, 6] + [UInt8](repeating: 0, count: 1 << 20)) == .failure(.malformed("1048578 bytes, expected 84 for a node id of 6 bytes")))
    }

    @Test func fieldLimits() throws {
        #expect(thrownError { () throws(LinkOfferError) in try Self.offer(nodeID: "") } == .malformed("node id of 0 bytes, allowed 1…255"))
        #expect(thrownError { () throws(LinkOfferError) in try Self.offer(nodeID: String(repeating: "n", count: 256)) }
            == .malformed("node id of 256 bytes, allowed 1…255"))
        let longest = try Self.offer(nodeID: String(repeating: "n", count: 255))
        #expect(try Self.verify(longest.signed(with: Self.secret)).get() == longest)
        #expect(thrownError { () throws(LinkOfferError) in try LinkOffer(nodeID: "a", epoch: 1, publicKey: [1], createdAtMilliseconds: 0) }
            == .malformed("public key of 1 bytes, expected 32"))
        #expect(thrownError { () throws(LinkOfferError) in try MediaLinkSecret([UInt8](repeating: 7, count: 15)) } == .secretTooShort(length: 15))
        #expect(try MediaLinkSecret.generate().bytes.count == 32)
        #expect(try MediaLinkSecret.generate().bytes != MediaLinkSecret.generate().bytes)
    }
}

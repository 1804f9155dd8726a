import Testing
@testable import ParlorMediaLink

@Suite struct MediaLinkKeysTests {
    /// Both nodes derive the same pair: what A seals with, B opens with, and the other way; the two directions share
    /// neither key nor nonce salt.
    @Test func bothEndsDeriveTheSamePair() throws {
        let ends = try LinkEnds()
        #expect(ends.aKeys.sending == ends.bKeys.receiving)
        #expect(ends.aKeys.receiving == ends.bKeys.sending)
        #expect(ends.aKeys.sending.key != ends.aKeys.receiving.key)
        #expect(ends.aKeys.sending.nonceSalt != ends.aKeys.receiving.nonceSalt)
        #expect(ends.aKeys.localEpoch == ends.aOffer.epoch && ends.aKeys.remoteEpoch == ends.bOffer.epoch)
        #expect(ends.bKeys.localEpoch == ends.bOffer.epoch && ends.bKeys.remoteEpoch == ends.aOffer.epoch)
        #expect(ends.aKeys.remoteNodeID == "node-b" && ends.bKeys.remoteNodeID == "node-a")
        #expect(!"\(ends.aKeys.sending)".contains(ends.aKeys.sending.key.map(String.init).joined(separator: ", ")))
    }

    /// The documented schedule, recomputed from its parts: HKDF-SHA256 with an empty salt over the X25519 secret,
    /// info = label || the lower node id's part || the higher's; the first 28 bytes for lower → higher.
    @Test func derivationIsTheDocumentedSchedule() throws {
        let zed = try X25519KeyPair(), alpha = try X25519KeyPair()
        let zedOffer = try LinkOffer(nodeID: "zed", epoch: 7, publicKey: zed.publicKey, createdAtMilliseconds: 0)
        let alphaOffer = try LinkOffer(nodeID: "alpha", epoch: 0x0102_0304, publicKey: alpha.publicKey, createdAtMilliseconds: 0)
        let keys = try MediaLinkKeys.derive(localOffer: zedOffer, localKeyPair: zed, remoteOffer: alphaOffer)
        let info = Array("parlor-media-link-v1".utf8) + [5] + Array("alpha".utf8) + [1, 2, 3, 4] + alpha.publicKey
            + [3] + Array("zed".utf8) + [0, 0, 0, 7] + zed.publicKey
        let output = try #require(HKDFSHA256.derive(inputKeyingMaterial: zed.sharedSecret(withPeer: alpha.publicKey), salt: [], info: info, length: 56))
        // zed sorts after alpha, so it sends on the second direction and receives on the first.
        #expect(keys.receiving == MediaLinkDirectionKeys(key: Array(output[0..<16]), nonceSalt: Array(output[16..<28])))
        #expect(keys.sending == MediaLinkDirectionKeys(key: Array(output[28..<44]), nonceSalt: Array(output[44..<56])))
    }

    /// A new key pair or a new epoch on either side gives different keys (a restart never reuses a key).
    @Test func everyEpochGetsItsOwnKeys() throws {
        let first = try LinkEnds(), second = try LinkEnds()
        #expect(first.aKeys.sending != second.aKeys.sending)
        let pair = try X25519KeyPair(), peer = try X25519KeyPair()
        let peerOffer = try LinkOffer(nodeID: "b", epoch: 1, publicKey: peer.publicKey, createdAtMilliseconds: 0)
        let epochOne = try LinkOffer(nodeID: "a", epoch: 1, publicKey: pair.publicKey, createdAtMilliseconds: 0)
        let epochTwo = try LinkOffer(nodeID: "a", epoch: 2, publicKey: pair.publicKey, createdAtMilliseconds: 0)
        #expect(try MediaLinkKeys.derive(localOffer: epochOne, localKeyPair: pair, remoteOffer: peerOffer).sending
            != MediaLinkKeys.derive(localOffer: epochTwo, localKeyPair: pair, remoteOffer: peerOffer).sending)
    }

    @Test func refusals() throws {
        let pair = try X25519KeyPair(), other = try X25519KeyPair()
        let offer = try LinkOffer(nodeID: "a", epoch: 1, publicKey: pair.publicKey, createdAtMilliseconds: 0)
        let peer = try LinkOffer(nodeID: "b", epoch: 1, publicKey: other.publicKey, createdAtMilliseconds: 0)
        let sameNode = try LinkOffer(nodeID: "a", epoch: 9, publicKey: other.publicKey, createdAtMilliseconds: 0)
        let lowOrderPeer = try LinkOffer(nodeID: "b", epoch: 1, publicKey: [UInt8](repeating: 0, count: 32), createdAtMilliseconds: 0)
        func derive(_ local: LinkOffer, _ keyPair: X25519KeyPair, _ remote: LinkOffer) -> MediaLinkCryptoError? {
            thrownError { () throws(MediaLinkCryptoError) in try MediaLinkKeys.derive(localOffer: local, localKeyPair: keyPair, remoteOffer: remote) }
        }
        #expect(derive(offer, other, peer) == .keyPairDoesNotMatchOffer)
        #expect(derive(offer, pair, sameNode) == .sameNodeOnBothEnds(nodeID: "a"))
        #expect(derive(offer, pair, lowOrderPeer) == .allZeroSharedSecret)
        #expect(derive(offer, pair, peer) == nil)
    }
}

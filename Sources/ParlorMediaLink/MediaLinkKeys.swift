/// One direction's AES-128-GCM key and the 12-byte salt its nonces are made from (nonce = salt XOR sequence).
public struct MediaLinkDirectionKeys: Sendable, Equatable, CustomStringConvertible {
    public static let keyLength = 16
    public static let saltLength = 12

    let key: [UInt8]
    let nonceSalt: [UInt8]

    init(key: [UInt8], nonceSalt: [UInt8]) {
        precondition(key.count == Self.keyLength && nonceSalt.count == Self.saltLength, "media link direction keys of the wrong size")
        self.key = key
        self.nonceSalt = nonceSalt
    }

    /// Never the key material: these values end up in logs and test failures.
    public var description: String { "MediaLinkDirectionKeys(redacted)" }
}

/// One node's keys for its link with one other node: what it seals with, what it opens with, and the epochs its
/// packets carry and the peer's must carry.
///
/// Derivation: X25519 between the local ephemeral key and the remote offer's public key, then HKDF-SHA256 (RFC 5869)
/// with an empty salt over that shared secret, 56 bytes long, with
///
///     info = "parlor-media-link-v1" || first || second
///     each = node id length (1 byte) || node id (UTF-8) || epoch (4 bytes, big-endian) || X25519 public key (32 bytes)
///
/// where first and second are the two offers ordered by their node ids' UTF-8 bytes. The output is, in order, the
/// key (16) and nonce salt (12) for packets from first to second, then those from second to first. Both nodes compute
/// the same info and so the same pair, each direction has its own key and salt, and fresh key pairs per epoch give
/// fresh keys after every restart, so a (key, nonce) pair is never used twice.
public struct MediaLinkKeys: Sendable, Equatable {
    static let infoLabel = Array("parlor-media-link-v1".utf8)
    static let outputLength = 2 * (MediaLinkDirectionKeys.keyLength + MediaLinkDirectionKeys.saltLength)

    public let sending: MediaLinkDirectionKeys
    public let receiving: MediaLinkDirectionKeys
    /// The epoch this node's packets carry (its own offer's).
    public let localEpoch: UInt32
    /// The epoch the peer's packets must carry (the peer's offer's).
    public let remoteEpoch: UInt32
    public let localNodeID: String
    public let remoteNodeID: String

    /// The keys for the link between `localOffer` (whose key pair is `localKeyPair`) and `remoteOffer` (already
    /// verified with `LinkOffer.verify`).
    public static func derive(localOffer: LinkOffer, localKeyPair: X25519KeyPair,
                              remoteOffer: LinkOffer) throws(MediaLinkCryptoError) -> MediaLinkKeys {
        guard OpenSSLBytes.constantTimeEqual(localOffer.publicKey, localKeyPair.publicKey) else { throw .keyPairDoesNotMatchOffer }
        let localID = Array(localOffer.nodeID.utf8), remoteID = Array(remoteOffer.nodeID.utf8)
        guard localID != remoteID else { throw .sameNodeOnBothEnds(nodeID: localOffer.nodeID) }
        let localIsFirst = localID.lexicographicallyPrecedes(remoteID)
        let (first, second) = localIsFirst ? (localOffer, remoteOffer) : (remoteOffer, localOffer)

        let sharedSecret = try localKeyPair.sharedSecret(withPeer: remoteOffer.publicKey)
        let info = infoLabel + infoPart(first) + infoPart(second)
        guard let output = HKDFSHA256.derive(inputKeyingMaterial: sharedSecret, salt: [], info: info, length: outputLength) else {
            throw failure("HKDF-SHA256")
        }
        let keyLength = MediaLinkDirectionKeys.keyLength, saltLength = MediaLinkDirectionKeys.saltLength
        let firstToSecond = MediaLinkDirectionKeys(key: Array(output[0..<keyLength]), nonceSalt: Array(output[keyLength..<(keyLength + saltLength)]))
        let secondStart = keyLength + saltLength
        let secondToFirst = MediaLinkDirectionKeys(key: Array(output[secondStart..<(secondStart + keyLength)]),
                                                   nonceSalt: Array(output[(secondStart + keyLength)...]))
        return MediaLinkKeys(sending: localIsFirst ? firstToSecond : secondToFirst, receiving: localIsFirst ? secondToFirst : firstToSecond,
                             localEpoch: localOffer.epoch, remoteEpoch: remoteOffer.epoch,
                             localNodeID: localOffer.nodeID, remoteNodeID: remoteOffer.nodeID)
    }

    static func infoPart(_ offer: LinkOffer) -> [UInt8] {
        var part: [UInt8] = [UInt8(offer.nodeID.utf8.count)]
        part += offer.nodeID.utf8
        part.appendBigEndian(UInt64(offer.epoch), count: 4)
        return part + offer.publicKey
    }
}

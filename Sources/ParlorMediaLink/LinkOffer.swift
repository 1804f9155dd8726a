import COpenSSL

/// The cluster's link secret: the HMAC key that signs link offers. Generated once and kept in the database like the
/// JWT secret, or given by the operator; at least 16 bytes (32 random bytes when generated).
public struct MediaLinkSecret: Sendable {
    public static let minimumLength = 16
    public static let generatedLength = 32

    let bytes: [UInt8]

    public init(_ bytes: [UInt8]) throws(LinkOfferError) {
        guard bytes.count >= Self.minimumLength else { throw .secretTooShort(length: bytes.count) }
        self.bytes = bytes
    }

    /// 32 bytes from OpenSSL's CSPRNG.
    public static func generate() throws(LinkOfferError) -> MediaLinkSecret {
        guard let bytes = OpenSSLBytes.random(count: generatedLength) else { throw .openSSL(call: "RAND_bytes") }
        return try MediaLinkSecret(bytes)
    }
}

/// What a node publishes in the database to set up media links in one epoch: who it is, the epoch, its ephemeral
/// X25519 public key and when it signed. `signed(with:)` gives the stored bytes; `verify` reads them back.
///
/// The byte encoding (version 1; integers big-endian; n = node id length):
///
/// | offset | size | field |
/// | --- | --- | --- |
/// | 0 | 1 | format version, 1 |
/// | 1 | 1 | n, 1…255 |
/// | 2 | n | node id, UTF-8 |
/// | 2+n | 4 | link epoch (UInt32) |
/// | 6+n | 8 | created at, milliseconds since 1970 (Int64) |
/// | 14+n | 32 | X25519 public key |
/// | 46+n | 32 | HMAC-SHA256 under the link secret of `"parlor-media-link-offer"` (23 ASCII bytes) followed by bytes 0 ..< 46+n |
///
/// 78 + n bytes in all, nothing after. The label keeps a MAC made for something else under the same secret from
/// passing as an offer.
public struct LinkOffer: Sendable, Equatable {
    public static let formatVersion: UInt8 = 1
    public static let nodeIDLengths = 1...255
    public static let macLength = HMACSHA256.digestLength
    static let macLabel = Array("parlor-media-link-offer".utf8)

    public let nodeID: String
    /// Chosen at random with each new key pair; media packets carry it so that one from an earlier key generation
    /// is told apart (`MediaLinkOpenError.wrongEpoch`) instead of being counted as forged.
    public let epoch: UInt32
    public let publicKey: [UInt8]
    public let createdAtMilliseconds: Int64

    public init(nodeID: String, epoch: UInt32, publicKey: [UInt8], createdAtMilliseconds: Int64) throws(LinkOfferError) {
        guard Self.nodeIDLengths.contains(nodeID.utf8.count) else {
            throw .malformed("node id of \(nodeID.utf8.count) bytes, allowed \(Self.nodeIDLengths.lowerBound)…\(Self.nodeIDLengths.upperBound)")
        }
        guard publicKey.count == X25519KeyPair.keyLength else { throw .malformed("public key of \(publicKey.count) bytes, expected 32") }
        self.nodeID = nodeID
        self.epoch = epoch
        self.publicKey = publicKey
        self.createdAtMilliseconds = createdAtMilliseconds
    }

    /// An offer for `keyPair` with a random epoch.
    public static func make(nodeID: String, keyPair: X25519KeyPair, createdAtMilliseconds: Int64) throws(LinkOfferError) -> LinkOffer {
        guard let random = OpenSSLBytes.random(count: 4) else { throw .openSSL(call: "RAND_bytes") }
        let epoch = random.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return try LinkOffer(nodeID: nodeID, epoch: epoch, publicKey: keyPair.publicKey, createdAtMilliseconds: createdAtMilliseconds)
    }

    /// The fields as encoded, without the MAC.
    var unsignedBytes: [UInt8] {
        var bytes: [UInt8] = [Self.formatVersion, UInt8(nodeID.utf8.count)]
        bytes.reserveCapacity(46 + nodeID.utf8.count + Self.macLength)
        bytes += nodeID.utf8
        bytes.appendBigEndian(UInt64(epoch), count: 4)
        bytes.appendBigEndian(UInt64(bitPattern: createdAtMilliseconds), count: 8)
        bytes += publicKey
        return bytes
    }

    /// The encoded offer with its MAC: what goes into the database.
    public func signed(with secret: MediaLinkSecret) throws(LinkOfferError) -> [UInt8] {
        let unsigned = unsignedBytes
        guard let mac = HMACSHA256.authenticate(Self.macLabel + unsigned, key: secret.bytes) else { throw .openSSL(call: "HMAC") }
        return unsigned + mac
    }

    /// The offer in `bytes` if its shape is right, its MAC matches under `secret` (compared in constant time) and it
    /// was signed at most `maxAgeMilliseconds` before `nowMilliseconds` and at most `maxClockSkewMilliseconds` after.
    public static func verify(_ bytes: [UInt8], secret: MediaLinkSecret, nowMilliseconds: Int64, maxAgeMilliseconds: Int64,
                              maxClockSkewMilliseconds: Int64 = 5_000) throws(LinkOfferError) -> LinkOffer {
        guard bytes.count >= 2 else { throw .malformed("\(bytes.count) bytes, too short") }
        guard bytes[0] == formatVersion else { throw .unsupportedVersion(bytes[0]) }
        let nodeIDLength = Int(bytes[1])
        guard nodeIDLengths.contains(nodeIDLength) else { throw .malformed("empty node id") }
        let signedLength = 46 + nodeIDLength
        guard bytes.count == signedLength + macLength else {
            throw .malformed("\(bytes.count) bytes, expected \(signedLength + macLength) for a node id of \(nodeIDLength) bytes")
        }
        guard let expected = HMACSHA256.authenticate(macLabel + bytes[..<signedLength], key: secret.bytes) else { throw .openSSL(call: "HMAC") }
        guard OpenSSLBytes.constantTimeEqual(expected, Array(bytes[signedLength...])) else { throw .badSignature }

        // Authentic from here on: the node that holds the secret wrote these fields.
        guard let nodeID = String(validating: bytes[2..<(2 + nodeIDLength)], as: UTF8.self) else { throw .malformed("node id is not UTF-8") }
        let epoch = UInt32(bytes.readBigEndian(at: 2 + nodeIDLength, count: 4))
        let createdAt = Int64(bitPattern: bytes.readBigEndian(at: 6 + nodeIDLength, count: 8))
        let publicKey = Array(bytes[(14 + nodeIDLength)..<signedLength])
        // Subtraction saturates: created-at values near Int64's ends must not trap.
        let (age, overflow) = nowMilliseconds.subtractingReportingOverflow(createdAt)
        if overflow { throw createdAt > nowMilliseconds ? .fromTheFuture(aheadMilliseconds: .max) : .stale(ageMilliseconds: .max) }
        guard age >= -max(0, maxClockSkewMilliseconds) else { throw .fromTheFuture(aheadMilliseconds: age == .min ? .max : -age) }
        guard age <= maxAgeMilliseconds else { throw .stale(ageMilliseconds: age) }
        return try LinkOffer(nodeID: nodeID, epoch: epoch, publicKey: publicKey, createdAtMilliseconds: createdAt)
    }
}

extension Array where Element == UInt8 {
    mutating func appendBigEndian(_ value: UInt64, count: Int) {
        for shift in stride(from: (count - 1) * 8, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    /// The `count` bytes at `offset` as a big-endian integer; the caller has checked the bounds.
    func readBigEndian(at offset: Int, count: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<(offset + count) { value = value << 8 | UInt64(self[index]) }
        return value
    }
}

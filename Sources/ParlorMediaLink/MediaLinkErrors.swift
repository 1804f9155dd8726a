/// A key pair, a key exchange, a key derivation or a cipher context could not be made.
public enum MediaLinkCryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An X25519 key (public or private) is not 32 bytes.
    case wrongKeyLength(expected: Int, got: Int)
    /// The exchange with the peer's key gave the all-zero value (RFC 7748 §6.1: a low-order peer point); OpenSSL
    /// refuses it in `EVP_PKEY_derive`, and we check the bytes as well.
    case allZeroSharedSecret
    /// Both offers name the same node: a link joins two different nodes, and the order of their ids picks the
    /// direction of each key.
    case sameNodeOnBothEnds(nodeID: String)
    /// The local key pair is not the one whose public key the local offer carries.
    case keyPairDoesNotMatchOffer
    /// An OpenSSL call failed.
    case openSSL(call: String)

    public var description: String {
        switch self {
        case .wrongKeyLength(let expected, let got): return "X25519 key of \(got) bytes, expected \(expected)"
        case .allZeroSharedSecret: return "X25519 shared secret is all zeros (low-order peer key)"
        case .sameNodeOnBothEnds(let nodeID): return "both ends of the media link are node \(nodeID)"
        case .keyPairDoesNotMatchOffer: return "the local key pair does not match the local link offer"
        case .openSSL(let call): return "OpenSSL \(call) failed"
        }
    }
}

/// Why a link offer was not made, or was refused when read back. Refusals are checked in this order: the bytes'
/// shape, the signature, then the time, so nothing unauthenticated is trusted.
public enum LinkOfferError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The cluster's link secret is shorter than `MediaLinkSecret.minimumLength` bytes.
    case secretTooShort(length: Int)
    /// A field is out of its limits (node id length, public key length) or the bytes are cut short or too long.
    case malformed(String)
    /// The format version byte is not one this build reads.
    case unsupportedVersion(UInt8)
    /// The HMAC does not match: signed under another secret, or changed after signing.
    case badSignature
    /// Signed longer ago than the freshness window allows.
    case stale(ageMilliseconds: Int64)
    /// Signed further in the future than the allowed clock skew.
    case fromTheFuture(aheadMilliseconds: Int64)
    /// An OpenSSL call failed.
    case openSSL(call: String)

    public var description: String {
        switch self {
        case .secretTooShort(let length): return "media link secret of \(length) bytes, at least \(MediaLinkSecret.minimumLength) needed"
        case .malformed(let reason): return "malformed link offer: \(reason)"
        case .unsupportedVersion(let version): return "link offer format version \(version) is not supported"
        case .badSignature: return "link offer signature does not match"
        case .stale(let age): return "link offer is \(age) ms old"
        case .fromTheFuture(let ahead): return "link offer is \(ahead) ms in the future"
        case .openSSL(let call): return "OpenSSL \(call) failed"
        }
    }
}

/// Why `MediaLinkSender.seal` made no packet. A refused field consumes no sequence number.
public enum MediaLinkSealError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The room id, speaker id or RTP packet is empty or longer than its limit (`MediaLinkPacketFormat`).
    case fieldOutOfLimits(field: String, length: Int, allowed: ClosedRange<Int>)
    /// Every 64-bit sequence number of this direction was used: the link needs new keys.
    case sequenceExhausted
    /// An OpenSSL call failed; the sequence number it had is not used again.
    case openSSL(call: String)

    public var description: String {
        switch self {
        case .fieldOutOfLimits(let field, let length, let allowed):
            return "media link \(field) of \(length) bytes, allowed \(allowed.lowerBound)…\(allowed.upperBound)"
        case .sequenceExhausted: return "media link sequence numbers exhausted: the link needs new keys"
        case .openSSL(let call): return "OpenSSL \(call) failed"
        }
    }
}

/// Why `MediaLinkReceiver.open` dropped a datagram; `counterLabel` names it for a metric. Every refusal leaves the
/// replay window as it was, except `.malformed` after authentication (the sequence number is then spent).
public enum MediaLinkOpenError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Too short, too long, an unknown version, or an authenticated body whose fields do not add up.
    case malformed(String)
    /// The header's link epoch is not this link's: a packet from an earlier (or another) key generation.
    case wrongEpoch(expected: UInt32, got: UInt32)
    /// The sequence number was accepted before.
    case replayed(sequence: UInt64)
    /// The sequence number lies below the replay window (`MediaLinkReplayWindow.size` behind the highest).
    case tooOld(sequence: UInt64)
    /// The AES-GCM tag does not match: forged, changed on the way, or sealed under other keys.
    case forged
    /// An OpenSSL call failed.
    case openSSL(call: String)

    /// One word per kind, for a `reason` label on the dropped-packets counter.
    public var counterLabel: String {
        switch self {
        case .malformed: return "malformed"
        case .wrongEpoch: return "wrong_epoch"
        case .replayed: return "replayed"
        case .tooOld: return "too_old"
        case .forged: return "forged"
        case .openSSL: return "openssl"
        }
    }

    public var description: String {
        switch self {
        case .malformed(let reason): return "malformed media link packet: \(reason)"
        case .wrongEpoch(let expected, let got): return "media link packet of epoch \(got), expected \(expected)"
        case .replayed(let sequence): return "media link packet \(sequence) replayed"
        case .tooOld(let sequence): return "media link packet \(sequence) is older than the replay window"
        case .forged: return "media link packet failed authentication"
        case .openSSL(let call): return "OpenSSL \(call) failed"
        }
    }
}

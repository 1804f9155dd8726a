/// Why a packet was refused or a context could not be made. Every refusal leaves the receiver's state (rollover
/// counter, replay window) as it was: only an authenticated packet moves it.
public enum SRTPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Shorter than its header (and CSRCs and extension) plus the tag, or for SRTCP the E-flag and index.
    case tooShort(length: Int)
    /// The RTP/RTCP version bits are not 2.
    case badVersion(UInt8)
    /// The caller's buffer has no room for the tag (protect writes in place).
    case noRoomForTag(needed: Int, capacity: Int)
    /// The authentication tag did not match: tampered, or protected under other keys.
    case authenticationFailed
    /// The packet's index was accepted before (a replay), or the sender already protected it.
    case replayed(index: UInt64)
    /// The packet's index is older than the replay window (128 packets) reaches.
    case tooOld(index: UInt64)
    /// The sender's SRTCP index would pass 2^31 - 1, or an RTP index 2^48 - 1: the keys must be renewed.
    case indexExhausted
    /// More SSRCs than one context keeps state for (`SRTPStreamTable.capacity`).
    case tooManyStreams(limit: Int)
    /// The keying material has the wrong length for the profile.
    case wrongKeyingMaterialLength(expected: Int, got: Int)
    /// An OpenSSL call failed (a context could not be made, or a cipher call returned an error).
    case openSSL(call: String)

    public var description: String {
        switch self {
        case .tooShort(let length): return "SRTP packet of \(length) bytes is too short"
        case .badVersion(let version): return "not RTP/RTCP version 2 (version \(version))"
        case .noRoomForTag(let needed, let capacity): return "SRTP buffer of \(capacity) bytes, \(needed) needed for the tag"
        case .authenticationFailed: return "SRTP authentication failed"
        case .replayed(let index): return "SRTP replay of index \(index)"
        case .tooOld(let index): return "SRTP index \(index) is older than the replay window"
        case .indexExhausted: return "SRTP index exhausted: the keys must be renewed"
        case .tooManyStreams(let limit): return "more than \(limit) SSRCs in one SRTP context"
        case .wrongKeyingMaterialLength(let expected, let got): return "SRTP keying material of \(got) bytes, expected \(expected)"
        case .openSSL(let call): return "OpenSSL \(call) failed"
        }
    }
}

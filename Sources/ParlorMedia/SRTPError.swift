import CSRTP

/// Why libsrtp2 refused a packet or a session, by its status code (`srtp_err_status_t`).
public enum SRTPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The authentication tag did not match: tampered, or protected with other keys.
    case authenticationFailed
    /// The packet's index was seen already (a replay).
    case replayed
    /// The packet's index is older than the replay window.
    case tooOld
    /// Too short or otherwise not an SRTP/SRTCP packet libsrtp2 can read.
    case malformed
    /// The keying material has the wrong length for the profile.
    case wrongKeyLength(expected: Int, got: Int)
    /// Any other libsrtp2 status.
    case library(status: UInt32, call: String)

    init(status: srtp_err_status_t, call: String) {
        switch status {
        case srtp_err_status_auth_fail: self = .authenticationFailed
        case srtp_err_status_replay_fail: self = .replayed
        case srtp_err_status_replay_old: self = .tooOld
        case srtp_err_status_bad_param, srtp_err_status_parse_err: self = .malformed
        default: self = .library(status: status.rawValue, call: call)
        }
    }

    public var description: String {
        switch self {
        case .authenticationFailed: return "SRTP authentication failed"
        case .replayed: return "SRTP replay"
        case .tooOld: return "SRTP packet older than the replay window"
        case .malformed: return "not a readable SRTP packet"
        case .wrongKeyLength(let expected, let got): return "SRTP keying material of \(got) bytes, expected \(expected)"
        case .library(let status, let call): return "\(call) failed with libsrtp2 status \(status)"
        }
    }
}

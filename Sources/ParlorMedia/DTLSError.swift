import COpenSSL

/// A DTLS failure: OpenSSL's reason, or a check of ours after the handshake.
public enum DTLSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// OpenSSL refused (the call, and the first queued error string).
    case openSSL(call: String, reason: String)
    /// The handshake failed: a bad record, an alert, a certificate refused.
    case handshakeFailed(reason: String)
    /// The peer's certificate is not the one its SDP announced.
    case fingerprintMismatch
    /// No SRTP profile was agreed in `use_srtp`.
    case noSRTPProfile
    /// Keys were asked for before the handshake completed.
    case notConnected
    /// The peer closed the association (close_notify).
    case closed

    public var description: String {
        switch self {
        case .openSSL(let call, let reason): return "\(call) failed: \(reason)"
        case .handshakeFailed(let reason): return "DTLS handshake failed: \(reason)"
        case .fingerprintMismatch: return "the DTLS peer's certificate does not match its SDP fingerprint"
        case .noSRTPProfile: return "no SRTP protection profile agreed in DTLS"
        case .notConnected: return "the DTLS handshake has not completed"
        case .closed: return "the DTLS peer closed the association"
        }
    }

    /// The oldest queued OpenSSL error as text, clearing the queue.
    static func drainedReason() -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return "no OpenSSL error queued" }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func openSSL(_ call: String) -> DTLSError { .openSSL(call: call, reason: drainedReason()) }
}

import CSRTP
import ParlorLoop

/// One direction of SRTP and SRTCP through libsrtp2: a session protects what we send, another unprotects what a
/// peer sends (RFC 3711), each keyed with one side's master key and salt from the DTLS exporter (RFC 5764 §4.2).
/// Not thread-safe: it belongs to the loop thread of its transport, like the connection state it protects.
public final class SRTPSession {
    public enum Direction: Sendable {
        /// Protects packets we send (any SSRC we use).
        case outbound
        /// Unprotects packets a peer sends (any SSRC it uses); replays are refused.
        case inbound
    }

    /// Room a protected packet needs beyond its plaintext: libsrtp2 appends the tag (and, for SRTCP, the index).
    public static let maximumTrailerLength = Int(SRTP_MAX_TRAILER_LEN)

    public let profile: SRTPProfile
    public let direction: Direction
    private let session: OpaquePointer

    /// `key` is the master key followed by the master salt, `profile.keyLength + profile.saltLength` bytes.
    public init(profile: SRTPProfile, direction: Direction, key: [UInt8]) throws(SRTPError) {
        let expected = profile.keyLength + profile.saltLength
        guard key.count == expected else { throw .wrongKeyLength(expected: expected, got: key.count) }
        try Self.initializeLibrary()
        var policy = srtp_policy_t()
        switch profile {
        case .aes128CMHMACSHA1_80:
            srtp_crypto_policy_set_rtp_default(&policy.rtp)  // AES_CM_128_HMAC_SHA1_80
            srtp_crypto_policy_set_rtcp_default(&policy.rtcp)
        case .aeadAES128GCM:
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtp)
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtcp)
        }
        policy.ssrc.type = direction == .outbound ? ssrc_any_outbound : ssrc_any_inbound
        policy.window_size = 1024
        policy.allow_repeat_tx = 0
        var keyCopy = key
        var created: OpaquePointer?
        let status = keyCopy.withUnsafeMutableBufferPointer { buffer -> srtp_err_status_t in
            policy.key = buffer.baseAddress
            return srtp_create(&created, &policy)  // copies the key into its own state
        }
        guard status == srtp_err_status_ok, let created else { throw SRTPError(status: status, call: "srtp_create") }
        self.profile = profile
        self.direction = direction
        self.session = created
    }

    deinit { srtp_dealloc(session) }

    /// Encrypts and authenticates the RTP packet in `packet` in place, growing it by the tag.
    public func protectRTP(_ packet: inout [UInt8]) throws(SRTPError) {
        try transform(&packet, minimum: 12, grow: true, call: "srtp_protect") { srtp_protect(session, $0, $1) }
    }

    /// Authenticates and decrypts the SRTP packet in `packet` in place, shrinking it to the RTP packet.
    public func unprotectRTP(_ packet: inout [UInt8]) throws(SRTPError) {
        try transform(&packet, minimum: 12, grow: false, call: "srtp_unprotect") { srtp_unprotect(session, $0, $1) }
    }

    /// Encrypts and authenticates the (compound) RTCP packet in `packet` in place.
    public func protectRTCP(_ packet: inout [UInt8]) throws(SRTPError) {
        try transform(&packet, minimum: 8, grow: true, call: "srtp_protect_rtcp") { srtp_protect_rtcp(session, $0, $1) }
    }

    /// Authenticates and decrypts the SRTCP packet in `packet` in place.
    public func unprotectRTCP(_ packet: inout [UInt8]) throws(SRTPError) {
        try transform(&packet, minimum: 8, grow: false, call: "srtp_unprotect_rtcp") { srtp_unprotect_rtcp(session, $0, $1) }
    }

    private func transform(_ packet: inout [UInt8], minimum: Int, grow: Bool, call: String,
                           _ body: (UnsafeMutableRawPointer, UnsafeMutablePointer<Int32>) -> srtp_err_status_t) throws(SRTPError) {
        // libsrtp2 reads the 12-byte RTP (8-byte RTCP) header without checking the length first.
        guard packet.count >= minimum else { throw .malformed }
        let plainLength = packet.count
        if grow { packet.append(contentsOf: repeatElement(0, count: Self.maximumTrailerLength)) }
        var length = Int32(plainLength)
        let status = packet.withUnsafeMutableBytes { body($0.baseAddress!, &length) }
        guard status == srtp_err_status_ok else {
            if grow { packet.removeLast(Self.maximumTrailerLength) }
            throw SRTPError(status: status, call: call)
        }
        packet.removeLast(packet.count - Int(length))
    }

    /// `Locked`, not `Synchronization.Mutex`: ThreadSanitizer cannot see the latter's futex (docs/architecture.md).
    private static let initialized = Locked<Bool>(false)

    /// `srtp_init` once per process, before the first session.
    private static func initializeLibrary() throws(SRTPError) {
        let status = initialized.withLock { done -> srtp_err_status_t in
            if done { return srtp_err_status_ok }
            let status = srtp_init()
            if status == srtp_err_status_ok { done = true }
            return status
        }
        guard status == srtp_err_status_ok else { throw SRTPError(status: status, call: "srtp_init") }
    }
}

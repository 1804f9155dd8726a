import ParlorSRTP

/// What DTLS-SRTP negotiation needs of ParlorSRTP's profiles: OpenSSL's names for `use_srtp`, the number
/// `SSL_get_selected_srtp_profile` reports, and our order of preference.
extension SRTPProtectionProfile {
    /// Our order of preference, the server's answer to a browser offering both: GCM first, since it protects a
    /// packet in about half the CPU time of counter mode with HMAC-SHA1 (bench/srtp-probe, docs/media.md).
    public static let preferenceOrder: [SRTPProtectionProfile] = [.aeadAES128GCM, .aes128CMHMACSHA1_80]

    /// The most bytes protecting adds to any packet of any profile: room a send buffer keeps beyond its plaintext.
    public static let largestOverhead = allCases.map(\.rtcpOverhead).max() ?? 0

    /// The name OpenSSL's `SSL_CTX_set_tlsext_use_srtp` takes.
    public var openSSLName: String {
        switch self {
        case .aes128CMHMACSHA1_80: return "SRTP_AES128_CM_SHA1_80"
        case .aeadAES128GCM: return "SRTP_AEAD_AES_128_GCM"
        }
    }

    /// The profile of a DTLS-SRTP protection profile number, if it is one we implement.
    public init?(protectionProfileID: UInt) {
        guard let profile = Self.allCases.first(where: { UInt($0.protectionProfileID) == protectionProfileID }) else { return nil }
        self = profile
    }

    /// The profile of its RFC name (`AEAD_AES_128_GCM`, `AES_CM_128_HMAC_SHA1_80`, as `description` gives it).
    public init?(name: String) {
        guard let profile = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = profile
    }
}

/// The SRTP protection profiles Parlor negotiates in DTLS's `use_srtp` extension (RFC 5764, RFC 7714), with the
/// key and salt sizes each one takes from the DTLS exporter.
public enum SRTPProfile: Sendable, Hashable, CaseIterable {
    case aes128CMHMACSHA1_80
    case aeadAES128GCM

    /// The IANA DTLS-SRTP protection profile number, as `SSL_get_selected_srtp_profile` reports it.
    public var protectionProfileID: UInt {
        switch self {
        case .aes128CMHMACSHA1_80: return 0x0001
        case .aeadAES128GCM: return 0x0007
        }
    }

    /// The name OpenSSL's `SSL_CTX_set_tlsext_use_srtp` takes.
    public var openSSLName: String {
        switch self {
        case .aes128CMHMACSHA1_80: return "SRTP_AES128_CM_SHA1_80"
        case .aeadAES128GCM: return "SRTP_AEAD_AES_128_GCM"
        }
    }

    public init?(protectionProfileID: UInt) {
        guard let profile = Self.allCases.first(where: { $0.protectionProfileID == protectionProfileID }) else { return nil }
        self = profile
    }

    /// Master key length in bytes.
    public var keyLength: Int { 16 }

    /// Master salt length in bytes: 14 for AES-CM (RFC 3711), 12 for AES-GCM (RFC 7714).
    public var saltLength: Int {
        switch self {
        case .aes128CMHMACSHA1_80: return 14
        case .aeadAES128GCM: return 12
        }
    }
}

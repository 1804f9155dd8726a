/// The two SRTP protection profiles ParlorSRTP implements, with the sizes each one takes and adds.
///
/// Keying input is what DTLS-SRTP exports for one direction (RFC 5764 §4.2): the master key followed by the
/// master salt, 30 bytes for AES_CM_128_HMAC_SHA1_80 (16 + 14), 28 for AEAD_AES_128_GCM (16 + 12). Splitting the
/// exporter's output (client key, server key, client salt, server salt) into the two directions is the caller's job.
public enum SRTPProtectionProfile: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// RFC 3711: AES-128 in counter mode, HMAC-SHA1 tag truncated to 80 bits (DTLS-SRTP profile 0x0001).
    case aes128CMHMACSHA1_80
    /// RFC 7714: AES-128-GCM, 128-bit tag (DTLS-SRTP profile 0x0007).
    case aeadAES128GCM

    public var masterKeyLength: Int { 16 }

    public var masterSaltLength: Int {
        switch self {
        case .aes128CMHMACSHA1_80: return 14
        case .aeadAES128GCM: return 12
        }
    }

    /// The bytes of keying input `SRTPSender` and `SRTPReceiver` take: master key then master salt.
    public var keyingMaterialLength: Int { masterKeyLength + masterSaltLength }

    /// The authentication tag each SRTP and SRTCP packet carries.
    public var tagLength: Int {
        switch self {
        case .aes128CMHMACSHA1_80: return 10
        case .aeadAES128GCM: return 16
        }
    }

    /// Bytes protecting adds to an RTP packet: the tag (no MKI).
    public var rtpOverhead: Int { tagLength }

    /// Bytes protecting adds to an RTCP packet: the tag and the 4-byte E-flag and SRTCP index.
    public var rtcpOverhead: Int { tagLength + 4 }

    /// The session salt the key derivation makes: 14 bytes for counter mode's IV, 12 for GCM's.
    var sessionSaltLength: Int { masterSaltLength }

    /// The IANA DTLS-SRTP protection profile number (RFC 5764 §4.1.2, RFC 7714 §14.2).
    public var protectionProfileID: UInt16 {
        switch self {
        case .aes128CMHMACSHA1_80: return 0x0001
        case .aeadAES128GCM: return 0x0007
        }
    }

    public var description: String {
        switch self {
        case .aes128CMHMACSHA1_80: return "AES_CM_128_HMAC_SHA1_80"
        case .aeadAES128GCM: return "AEAD_AES_128_GCM"
        }
    }
}

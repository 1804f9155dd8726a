import COpenSSL

/// The server's DTLS identity: an ECDSA P-256 key and a self-signed certificate made at start (WebRTC peers
/// authenticate each other by the fingerprint in the signalled SDP, not by a CA, RFC 8827 §6.5), and its SHA-256
/// fingerprint for `a=fingerprint`.
public final class DTLSCertificate: @unchecked Sendable {  // immutable after init; OpenSSL objects are only read
    let key: OpaquePointer
    let certificate: OpaquePointer
    public let fingerprint: DTLSFingerprint

    /// `commonName` goes in subject and issuer; valid from a day ago (clock skew) for `days` days.
    public init(commonName: String = "parlor", days: Int = 30) throws(DTLSError) {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil) else { throw .openSSL("EVP_PKEY_CTX_new_id") }
        defer { EVP_PKEY_CTX_free(context) }
        var generated: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_ec_paramgen_curve_nid(context, NID_X9_62_prime256v1) == 1,
              EVP_PKEY_keygen(context, &generated) == 1, let key = generated else { throw .openSSL("EVP_PKEY_keygen") }
        guard let certificate = X509_new() else {
            EVP_PKEY_free(key)
            throw .openSSL("X509_new")
        }
        var serial = [UInt8](repeating: 0, count: 8)
        _ = RAND_bytes(&serial, 8)
        let serialNumber = serial.reduce(0) { $0 << 8 | Int($1) } & Int(Int32.max)
        let name = X509_get_subject_name(certificate)
        let ok = ASN1_INTEGER_set(X509_get_serialNumber(certificate), serialNumber) == 1
            && X509_set_version(certificate, 2) == 1
            && X509_gmtime_adj(X509_getm_notBefore(certificate), -86400) != nil
            && X509_gmtime_adj(X509_getm_notAfter(certificate), days * 86400) != nil
            && X509_set_pubkey(certificate, key) == 1
            && X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, commonName, -1, -1, 0) == 1
            && X509_set_issuer_name(certificate, name) == 1
            && X509_sign(certificate, key, EVP_sha256()) > 0
        guard ok, let digest = Self.sha256(of: certificate) else {
            let error = DTLSError.openSSL("X509_sign")
            X509_free(certificate)
            EVP_PKEY_free(key)
            throw error
        }
        self.key = key
        self.certificate = certificate
        self.fingerprint = DTLSFingerprint(algorithm: "sha-256", digest: digest)
    }

    deinit {
        X509_free(certificate)
        EVP_PKEY_free(key)
    }

    /// The SHA-256 of a certificate's DER encoding, as `a=fingerprint:sha-256` names it.
    static func sha256(of certificate: OpaquePointer) -> [UInt8]? { digest(of: certificate, algorithm: "sha-256") }

    /// The digest of a certificate's DER encoding under an SDP hash function name ("sha-256", "sha-384", "sha-512");
    /// nil for any other.
    static func digest(of certificate: OpaquePointer, algorithm: String) -> [UInt8]? {
        let function: OpaquePointer?
        switch algorithm {
        case "sha-256": function = EVP_sha256()
        case "sha-384": function = EVP_sha384()
        case "sha-512": function = EVP_sha512()
        default: return nil
        }
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(certificate, function, &digest, &length) == 1 else { return nil }
        return Array(digest.prefix(Int(length)))
    }

    /// This certificate's fingerprint under another hash function (tests: a peer that lists several).
    public func fingerprint(algorithm: String) -> DTLSFingerprint? {
        Self.digest(of: certificate, algorithm: algorithm).map { DTLSFingerprint(algorithm: algorithm, digest: $0) }
    }
}

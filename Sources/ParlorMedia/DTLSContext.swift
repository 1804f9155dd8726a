import COpenSSL
import ParlorSRTP

/// An OpenSSL `SSL_CTX` for DTLS 1.2 with our certificate, `use_srtp` offering `profiles` (in preference order), and
/// a peer certificate required but not checked against a CA: the transport compares its fingerprint with the SDP.
/// One per role per process; every `DTLSTransport` of that role shares it.
public final class DTLSContext: @unchecked Sendable {  // configured once in init, then only used to create SSL objects
    public enum Role: Sendable { case server, client }

    public let role: Role
    public let certificate: DTLSCertificate
    public let profiles: [SRTPProtectionProfile]
    let context: OpaquePointer

    public init(role: Role, certificate: DTLSCertificate,
                profiles: [SRTPProtectionProfile] = SRTPProtectionProfile.preferenceOrder) throws(DTLSError) {
        guard let context = SSL_CTX_new(role == .server ? DTLS_server_method() : DTLS_client_method()) else {
            throw .openSSL("SSL_CTX_new")
        }
        self.role = role
        self.certificate = certificate
        self.profiles = profiles
        self.context = context
        // From here on deinit frees the context if a step below throws.
        guard SSL_CTX_ctrl(context, SSL_CTRL_SET_MIN_PROTO_VERSION, Int(DTLS1_2_VERSION), nil) == 1 else {
            throw .openSSL("SSL_CTX_set_min_proto_version")
        }
        guard SSL_CTX_use_certificate(context, certificate.certificate) == 1, SSL_CTX_use_PrivateKey(context, certificate.key) == 1,
              SSL_CTX_check_private_key(context) == 1 else { throw .openSSL("SSL_CTX_use_certificate") }
        // Zero means success for this one call.
        guard SSL_CTX_set_tlsext_use_srtp(context, profiles.map(\.openSSLName).joined(separator: ":")) == 0 else {
            throw .openSSL("SSL_CTX_set_tlsext_use_srtp")
        }
        // WebRTC certificates are self-signed: accept any chain here, the fingerprint is checked after the handshake.
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT) { _, _ in 1 }
        if role == .server { DTLSCookie.install(on: context) }
    }

    deinit { SSL_CTX_free(context) }
}

import COpenSSL
import ParlorSRTP

/// One DTLS association (RFC 6347) with one peer, driven by datagrams: OpenSSL reads from and writes to memory BIOs,
/// never a socket, so the media port's socket and loop stay ours. Feed it each DTLS datagram from the peer with
/// `handle(_:now:)`, send what it returns, and call `handleTimeout(now:)` when `retransmissionDeadline` passes.
/// When `isConnected`, `keyingMaterial()` gives the SRTP keys (RFC 5764). Loop-thread state, not thread-safe.
public final class DTLSTransport {
    public enum State: Sendable, Equatable { case handshaking, connected, closed, failed }

    public let context: DTLSContext
    /// The SDP's fingerprint of the peer; the handshake fails if its certificate does not match.
    public let expectedRemoteFingerprint: DTLSFingerprint?
    public let mtu: Int
    public private(set) var state: State = .handshaking
    /// When to call `handleTimeout(now:)` (monotonic nanoseconds), while a flight awaits its answer.
    public private(set) var retransmissionDeadline: UInt64?
    /// What the server role's DTLS cookie is bound to: the source address of the datagram being handled.
    var cookieSubject: [UInt8] = []
    private let ssl: OpaquePointer
    private let incoming: OpaquePointer
    private let outgoing: OpaquePointer

    public var isConnected: Bool { state == .connected }

    /// `mtu`: the largest datagram to send; 1200 bytes fits every path WebRTC supports.
    public init(context: DTLSContext, expectedRemoteFingerprint: DTLSFingerprint?, mtu: Int = 1200) throws(DTLSError) {
        guard let ssl = SSL_new(context.context) else { throw .openSSL("SSL_new") }
        guard let incoming = BIO_new(BIO_s_mem()), let outgoing = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw .openSSL("BIO_new")
        }
        // An empty input BIO means "try again later", not end of stream.
        BIO_ctrl(incoming, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nil)
        SSL_set_bio(ssl, incoming, outgoing)  // the SSL owns both BIOs from here
        // Memory BIOs cannot tell OpenSSL the path MTU: we do.
        SSL_set_options(ssl, 0x1000)  // SSL_OP_NO_QUERY_MTU (a function-like macro Swift cannot import)
        if context.role == .server { SSL_set_options(ssl, DTLSCookie.option) }
        SSL_ctrl(ssl, SSL_CTRL_SET_MTU, mtu - 28, nil)  // minus the IPv4 and UDP headers
        // OpenSSL's first retransmission waits 1 s; WebRTC stacks start at 50–100 ms and double (capped) from there.
        DTLS_set_timer_cb(ssl) { _, previous in previous == 0 ? 100_000 : min(previous * 2, 10_000_000) }
        if context.role == .server { SSL_set_accept_state(ssl) } else { SSL_set_connect_state(ssl) }
        self.context = context
        self.expectedRemoteFingerprint = expectedRemoteFingerprint
        self.mtu = mtu
        self.ssl = ssl
        self.incoming = incoming
        self.outgoing = outgoing
        // The cookie callbacks find the transport here (the SSL never outlives it: deinit frees it).
        SSL_set_ex_data(ssl, 0, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit { SSL_free(ssl) }

    /// The client's first flight (ClientHello); a server returns nothing and waits for it.
    public func start(now: UInt64) throws(DTLSError) -> [[UInt8]] {
        guard context.role == .client else { return [] }
        try advanceHandshake(now: now)
        return drainOutgoing()
    }

    /// Takes one datagram from the peer; returns the datagrams to send back (handshake flights, alerts). `source`:
    /// where it came from, which the server role's cookie (HelloVerifyRequest) is bound to.
    public func handle(_ datagram: [UInt8], from source: TransportAddress? = nil, now: UInt64) throws(DTLSError) -> [[UInt8]] {
        guard state == .handshaking || state == .connected else { return [] }
        cookieSubject = source.map { Array($0.description.utf8) } ?? []
        guard !datagram.isEmpty else { return [] }
        _ = datagram.withUnsafeBytes { BIO_write(incoming, $0.baseAddress, Int32($0.count)) }
        if state == .handshaking {
            try advanceHandshake(now: now)  // on failure the transport is dead: the caller drops the session
        } else {
            try readApplicationData()
        }
        return drainOutgoing()
    }

    /// Retransmits the last flight if its timer ran out (RFC 6347 §4.2.4); returns what to send. OpenSSL keeps the
    /// timer itself on the real clock: `now` only spares a call before `retransmissionDeadline`.
    public func handleTimeout(now: UInt64) -> [[UInt8]] {
        guard state == .handshaking, let deadline = retransmissionDeadline, now >= deadline else { return [] }
        SSL_ctrl(ssl, DTLS_CTRL_HANDLE_TIMEOUT, 0, nil)
        updateDeadline(now: now)
        return drainOutgoing()
    }

    /// The SRTP profile agreed and the keys exported with "EXTRACTOR-dtls_srtp" (RFC 5764 §4.2).
    public func keyingMaterial() throws(DTLSError) -> SRTPKeyingMaterial {
        guard state == .connected else { throw .notConnected }
        guard let selected = SSL_get_selected_srtp_profile(ssl), let profile = SRTPProtectionProfile(protectionProfileID: selected.pointee.id) else {
            throw .noSRTPProfile
        }
        let label = "EXTRACTOR-dtls_srtp"
        var exported = [UInt8](repeating: 0, count: 2 * profile.keyingMaterialLength)
        guard SSL_export_keying_material(ssl, &exported, exported.count, label, label.utf8.count, nil, 0, 0) == 1 else {
            throw .openSSL("SSL_export_keying_material")
        }
        return SRTPKeyingMaterial(profile: profile, exported: exported, isServer: context.role == .server)
    }

    /// The SHA-256 fingerprint of the peer's certificate, once it sent one.
    public var remoteFingerprint: DTLSFingerprint? { remoteFingerprint(algorithm: "sha-256") }

    /// The peer certificate's fingerprint under `algorithm` ("sha-256", "sha-384", "sha-512"), once it sent one.
    public func remoteFingerprint(algorithm: String) -> DTLSFingerprint? {
        guard let certificate = SSL_get1_peer_certificate(ssl) else { return nil }
        defer { X509_free(certificate) }
        return DTLSCertificate.digest(of: certificate, algorithm: algorithm).map { DTLSFingerprint(algorithm: algorithm, digest: $0) }
    }

    /// Sends close_notify; returns the datagram to send.
    public func close() -> [[UInt8]] {
        guard state == .connected || state == .handshaking else { return [] }
        SSL_shutdown(ssl)
        state = .closed
        retransmissionDeadline = nil
        return drainOutgoing()
    }

    private func advanceHandshake(now: UInt64) throws(DTLSError) {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            retransmissionDeadline = nil
            // Computed under the SDP's own hash function; one we cannot compute never matches.
            if let expected = expectedRemoteFingerprint, remoteFingerprint(algorithm: expected.algorithm) != expected {
                state = .failed
                throw .fingerprintMismatch
            }
            state = .connected
            return
        }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            updateDeadline(now: now)
        default:
            state = .failed
            retransmissionDeadline = nil
            throw .handshakeFailed(reason: DTLSError.drainedReason())
        }
    }

    /// After the handshake nothing but alerts (or a retransmitted last flight, which OpenSSL answers) is expected:
    /// application data on a DTLS-SRTP association is discarded.
    private func readApplicationData() throws(DTLSError) {
        var buffer = [UInt8](repeating: 0, count: 2048)
        while true {
            ERR_clear_error()
            let count = SSL_read(ssl, &buffer, Int32(buffer.count))
            if count > 0 { continue }
            switch SSL_get_error(ssl, count) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                return
            case SSL_ERROR_ZERO_RETURN:
                state = .closed
                throw .closed
            default:
                state = .failed
                throw .handshakeFailed(reason: DTLSError.drainedReason())
            }
        }
    }

    private func updateDeadline(now: UInt64) {
        var remaining = timeval()
        if SSL_ctrl(ssl, DTLS_CTRL_GET_TIMEOUT, 0, &remaining) == 1 {
            retransmissionDeadline = now + UInt64(remaining.tv_sec) * 1_000_000_000 + UInt64(remaining.tv_usec) * 1000
        } else {
            retransmissionDeadline = nil
        }
    }

    /// What OpenSSL wrote, as datagrams: its records (13-byte header with the length at bytes 11–12), packed whole
    /// into datagrams of at most `mtu` bytes (several records per datagram are allowed, RFC 6347 §4.1.1).
    private func drainOutgoing() -> [[UInt8]] {
        let pending = Int(BIO_ctrl_pending(outgoing))
        guard pending > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: pending)
        let read = Int(BIO_read(outgoing, &bytes, Int32(pending)))
        guard read > 0 else { return [] }
        var datagrams: [[UInt8]] = []
        var current: [UInt8] = []
        var offset = 0
        while offset + 13 <= read {
            let recordLength = 13 + (Int(bytes[offset + 11]) << 8 | Int(bytes[offset + 12]))
            let end = min(offset + recordLength, read)
            if !current.isEmpty, current.count + (end - offset) > mtu {
                datagrams.append(current)
                current = []
            }
            current += bytes[offset..<end]
            offset = end
        }
        if !current.isEmpty { datagrams.append(current) }
        return datagrams
    }
}

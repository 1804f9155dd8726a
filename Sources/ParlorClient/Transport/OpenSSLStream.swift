#if !canImport(Network) && canImport(COpenSSL)
#if canImport(Glibc)
import Glibc
#endif
import COpenSSL

/// TLS over a `TCPSocket` through OpenSSL, with memory BIOs: OpenSSL decrypts from `incoming` and encrypts into
/// `outgoing`, and the bytes travel through TCPSocket's own `send` and `receive`. So timeouts, `MSG_NOSIGNAL`, and
/// `shutdown` waking a blocked reader work exactly as on a plain connection, and OpenSSL's WANT_READ is simply "receive
/// more from the socket" (a memory BIO never reports WANT_WRITE: it grows, and we send what it holds).
///
/// Threading as TCPSocket's: any thread sends, one thread receives. OpenSSL allows one call at a time per SSL object,
/// so one lock guards it; the lock is held while records are sent (so records leave in the order OpenSSL made them),
/// never while waiting to receive.
final class OpenSSLStream: ByteStream {
    /// The SSL object and its memory BIOs; nil once closed.
    private struct Session {
        let ssl: OpaquePointer
        let incoming: OpaquePointer
        let outgoing: OpaquePointer
    }

    private let socket: TCPSocket
    private let session: Locked<Session?>

    private init(socket: TCPSocket, session: Session) {
        self.socket = socket
        self.session = Locked(session)
    }

    /// Connects and completes the handshake within `timeout`, verifying the chain against `trust` and the
    /// certificate's name against `host` (an IP address is checked against the certificate's IP addresses).
    static func connect(host: String, port: Int, trust: TLSTrust, timeout: Duration) throws(ParlorError) -> OpenSSLStream {
        let context = try OpenSSLClientContext.shared(for: trust)
        let socket = try TCPSocket.connect(host: host, port: port, timeout: timeout)
        guard let ssl = SSL_new(context.context) else {
            socket.close()
            throw .tls(OpenSSLClientContext.openSSLErrors("SSL_new failed"))
        }
        guard let incoming = BIO_new(BIO_s_mem()), let outgoing = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            socket.close()
            throw .tls("cannot allocate OpenSSL buffers")
        }
        SSL_set_bio(ssl, incoming, outgoing)  // the SSL object owns both BIOs from here
        SSL_set_connect_state(ssl)
        let stream = OpenSSLStream(socket: socket, session: Session(ssl: ssl, incoming: incoming, outgoing: outgoing))
        do throws(ParlorError) {
            try stream.expect(host: host, on: ssl)
            socket.setReceiveTimeout(timeout)
            socket.setSendTimeout(timeout)
            try stream.handshake(ssl, host: host, port: port, timeout: timeout)
        } catch {
            stream.shutdown()  // no close_notify after a failed handshake
            stream.close()
            throw error
        }
        return stream
    }

    /// SNI and the name the certificate must carry. SNI carries DNS names only (RFC 6066), never an address.
    private func expect(host: String, on ssl: OpaquePointer) throws(ParlorError) {
        let parameters = SSL_get0_param(ssl)
        X509_VERIFY_PARAM_set_hostflags(parameters, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
        let address = host.split(separator: "%", maxSplits: 1).first.map(String.init) ?? host  // fe80::1%eth0
        if Self.isIPAddress(address) {
            guard X509_VERIFY_PARAM_set1_ip_asc(parameters, address) == 1 else { throw .tls("cannot check the certificate against \(host)") }
        } else {
            let named = host.withCString { name in
                SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, Int(TLSEXT_NAMETYPE_host_name), UnsafeMutableRawPointer(mutating: name))
            }
            guard named == 1, X509_VERIFY_PARAM_set1_host(parameters, host, 0) == 1 else {
                throw .tls("cannot check the certificate against the name \(host)")
            }
        }
    }

    private static func isIPAddress(_ text: String) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16)
        return inet_pton(AF_INET, text, &buffer) == 1 || inet_pton(AF_INET6, text, &buffer) == 1
    }

    private func handshake(_ ssl: OpaquePointer, host: String, port: Int, timeout: Duration) throws(ParlorError) {
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let step: Step = session.withLock { current in
                guard let current else { return .failed(.connectionLost("the connection is closed")) }
                ERR_clear_error()
                let result = SSL_do_handshake(current.ssl)
                // Sent also on failure: the alert tells the server why.
                if let failure = flush(current) { return .failed(failure) }
                if result == 1 { return .done(0) }
                switch SSL_get_error(current.ssl, result) {
                case SSL_ERROR_WANT_READ: return .needInput
                default:
                    let verified = SSL_get_verify_result(current.ssl)
                    if verified != Int(X509_V_OK) {
                        return .failed(.tls(OpenSSLClientContext.verificationFailure(verified, host: host, port: port)))
                    }
                    let what = OpenSSLClientContext.openSSLErrors("TLS handshake with \(host):\(port) failed")
                    return .failed(.tls(what + " (is the server serving https, and TLS 1.2 or newer?)"))
                }
            }
            switch step {
            case .done: return
            case .failed(let error): throw error
            case .needInput, .ended: break
            }
            switch try socket.receive(into: &chunk) {
            case .bytes(let count): feed(chunk, count: count)
            case .endOfStream: throw .tls("the server closed the connection during the TLS handshake (is \(host):\(port) serving https?)")
            case .timedOut: throw .timedOut("the TLS handshake with \(host):\(port) did not finish within \(timeout)")
            }
        }
    }

    private enum Step {
        case done(Int)
        case needInput
        case ended
        case failed(ParlorError)
    }

    /// Sends what OpenSSL wrote into `outgoing`. Called with the session lock held.
    private func flush(_ current: Session) -> ParlorError? {
        let pending = BIO_ctrl_pending(current.outgoing)
        guard pending > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(pending))
        let read = bytes.withUnsafeMutableBytes { BIO_read(current.outgoing, $0.baseAddress, Int32(clamping: $0.count)) }
        guard read > 0 else { return nil }
        do {
            try socket.send(read == bytes.count ? bytes : Array(bytes[..<Int(read)]))
            return nil
        } catch {
            return error
        }
    }

    /// Hands bytes from the socket to OpenSSL.
    private func feed(_ chunk: [UInt8], count: Int) {
        session.withLock { current in
            guard let current else { return }
            _ = chunk.withUnsafeBytes { BIO_write(current.incoming, $0.baseAddress, Int32(count)) }
        }
    }

    // MARK: ByteStream

    func setReceiveTimeout(_ timeout: Duration?) { socket.setReceiveTimeout(timeout) }
    func setSendTimeout(_ timeout: Duration?) { socket.setSendTimeout(timeout) }

    func send(_ bytes: [UInt8]) throws(ParlorError) {
        let failure: ParlorError? = session.withLock { current in
            guard let current else { return .connectionLost("the connection is closed") }
            var offset = 0
            while offset < bytes.count {
                // At most 1 MiB encrypted at a time, so a large message does not sit whole in the memory BIO.
                let end = min(offset + (1 << 20), bytes.count)
                var written = 0
                ERR_clear_error()
                let result = bytes[offset..<end].withUnsafeBytes { SSL_write_ex(current.ssl, $0.baseAddress, $0.count, &written) }
                // After the handshake, a write fails only on a connection that is going away, as a plain send does.
                guard result == 1 else { return .connectionLost(OpenSSLClientContext.openSSLErrors("TLS write failed")) }
                offset += written
                if let failure = flush(current) { return failure }
            }
            return nil
        }
        if let failure { throw failure }
    }

    func receive(into chunk: inout [UInt8]) throws(ParlorError) -> ReceiveResult {
        while true {
            let step: Step = chunk.withUnsafeMutableBytes { buffer in
                session.withLock { current in
                    guard let current else { return .ended }
                    var count = 0
                    ERR_clear_error()
                    let result = SSL_read_ex(current.ssl, buffer.baseAddress, buffer.count, &count)
                    // TLS 1.3 may answer while reading (a key update): that goes out before we wait.
                    let failure = flush(current)
                    if result == 1 { return .done(count) }
                    if let failure { return .failed(failure) }
                    switch SSL_get_error(current.ssl, result) {
                    case SSL_ERROR_WANT_READ: return .needInput
                    case SSL_ERROR_ZERO_RETURN: return .ended  // the server's close_notify
                    default: return .failed(.tls(OpenSSLClientContext.openSSLErrors("TLS error on an open connection")))
                    }
                }
            }
            switch step {
            case .done(let count): return .bytes(count)
            case .ended: return .endOfStream
            case .failed(let error): throw error
            case .needInput: break
            }
            // Decrypted bytes come only from whole records; wait for the socket to deliver the rest of one. `chunk`
            // holds nothing of the caller's yet, so it carries the ciphertext.
            switch try socket.receive(into: &chunk) {
            case .bytes(let count): feed(chunk, count: count)
            case .endOfStream: return .endOfStream
            case .timedOut: return .timedOut
            }
        }
    }

    func shutdown() {
        socket.shutdown()
    }

    /// Sends close_notify (best effort; the server may have gone), frees the SSL object, closes the socket.
    func close() {
        session.withLock { current in
            guard let open = current else { return }
            current = nil
            ERR_clear_error()
            if SSL_is_init_finished(open.ssl) == 1 {
                _ = SSL_shutdown(open.ssl)
                _ = flush(open)
            }
            ERR_clear_error()
            SSL_free(open.ssl)
        }
        socket.close()
    }

    deinit {
        close()
    }
}
#endif

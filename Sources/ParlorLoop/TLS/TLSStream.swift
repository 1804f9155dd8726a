import COpenSSL

/// One connection's TLS session over a non-blocking socket. OpenSSL reads and writes the fd itself; every call
/// reports whether it finished or must wait for the socket to become readable or writable.
final class TLSStream {
    enum Outcome {
        case done(Int)
        case wantRead
        case wantWrite
        /// The peer closed the TLS session (close_notify) or the connection.
        case closed
        case failed(String)
    }

    private let ssl: OpaquePointer
    private(set) var handshakeComplete = false

    init(context: TLSContext, fd: Int32) throws(TLSError) {
        guard let ssl = SSL_new(context.context) else { throw .openSSL("SSL_new failed") }
        self.ssl = ssl
        SSL_set_fd(ssl, fd)
        SSL_set_accept_state(ssl)
    }

    deinit { SSL_free(ssl) }

    func handshake() -> Outcome {
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            handshakeComplete = true
            return .done(0)
        }
        return outcome(of: result)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Outcome {
        var count = 0
        let result = SSL_read_ex(ssl, buffer.baseAddress, buffer.count, &count)
        return result == 1 ? .done(count) : outcome(of: result)
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> Outcome {
        var count = 0
        let result = SSL_write_ex(ssl, bytes.baseAddress, bytes.count, &count)
        return result == 1 ? .done(count) : outcome(of: result)
    }

    /// Decrypted bytes OpenSSL holds that a read would return without touching the socket.
    var hasBufferedInput: Bool { SSL_pending(ssl) > 0 }

    /// Sends close_notify (best effort; we do not wait for the peer's).
    func shutdown() {
        _ = SSL_shutdown(ssl)
    }

    private func outcome(of result: Int32) -> Outcome {
        let error = SSL_get_error(ssl, result)
        switch error {
        case SSL_ERROR_WANT_READ: return .wantRead
        case SSL_ERROR_WANT_WRITE: return .wantWrite
        case SSL_ERROR_ZERO_RETURN: return .closed
        case SSL_ERROR_SYSCALL:
            ERR_clear_error()
            return .closed
        default:
            return .failed(TLSError.openSSL("TLS error \(error)").description)
        }
    }
}

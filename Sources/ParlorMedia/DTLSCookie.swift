import COpenSSL

/// DTLS's stateless cookie exchange (RFC 6347 §4.2.1) for the server role: a first ClientHello is answered with a
/// small HelloVerifyRequest carrying a cookie bound to the datagram's source address, and the handshake goes on only
/// with a ClientHello that returns it. So no server flight (certificate, several kilobytes with retransmissions) is
/// sent to an address that has not shown it receives what we send. OpenSSL runs the exchange
/// (`SSL_OP_COOKIE_EXCHANGE`); these callbacks make and check the cookie: HMAC-SHA256 of the source address under a
/// key made at start.
enum DTLSCookie {
    /// `SSL_OP_COOKIE_EXCHANGE` (`SSL_OP_BIT(13)`, a macro Swift cannot import).
    static let option: UInt64 = 0x2000

    private static let key: [UInt8] = {
        var key = [UInt8](repeating: 0, count: 32)
        _ = RAND_bytes(&key, Int32(key.count))
        return key
    }()

    /// The cookie for the transport's current source address (`DTLSTransport.cookieSubject`, reached through the SSL's
    /// app data slot, index 0).
    static func cookie(for ssl: OpaquePointer?) -> [UInt8]? {
        guard let ssl, let transport = SSL_get_ex_data(ssl, 0) else { return nil }
        let subject = Unmanaged<DTLSTransport>.fromOpaque(transport).takeUnretainedValue().cookieSubject
        var code = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = key.withUnsafeBytes { key in
            subject.withUnsafeBytes { subject in
                HMAC(EVP_sha256(), key.baseAddress, Int32(key.count), subject.baseAddress?.assumingMemoryBound(to: UInt8.self),
                     subject.count, &code, &length) != nil
            }
        }
        return ok ? Array(code.prefix(Int(length))) : nil
    }

    /// Installs the callbacks on a server context.
    static func install(on context: OpaquePointer) {
        SSL_CTX_set_cookie_generate_cb(context) { ssl, cookie, length in
            guard let cookie, let length, let made = DTLSCookie.cookie(for: ssl) else { return 0 }
            for (index, byte) in made.enumerated() { cookie[index] = byte }
            length.pointee = UInt32(made.count)
            return 1
        }
        SSL_CTX_set_cookie_verify_cb(context) { ssl, cookie, length in
            guard let cookie, let expected = DTLSCookie.cookie(for: ssl) else { return 0 }
            return HMACSHA1.equal(Array(UnsafeBufferPointer(start: cookie, count: Int(length)))[...], expected) ? 1 : 0
        }
    }
}

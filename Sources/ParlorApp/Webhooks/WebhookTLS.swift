#if canImport(Glibc)
import Glibc
#endif
import COpenSSL

/// The client side of https:// receivers, OpenSSL's: TLS 1.2 or later, and the receiver's certificate always
/// verified, against the system's CA store or, with --webhook-ca-file, against that file only (a receiver with a
/// self-signed or private-CA certificate). There is no way to switch verification off.
final class WebhookTLS: @unchecked Sendable {  // the SSL_CTX is only read once set up; OpenSSL locks its own counters
    private let context: OpaquePointer

    /// `caFile`: PEM certificates to trust instead of the system store (nil: the system store).
    init(caFile: String?) throws {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw WebhookTLSError.openSSL("SSL_CTX_new failed") }
        self.context = context
        guard parlor_ssl_ctx_set_min_tls12(context) == 1 else { throw WebhookTLSError.openSSL("cannot require TLS 1.2") }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        if let caFile {
            guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
                throw WebhookTLSError.openSSL("cannot load the webhook CA file \(caFile)")
            }
        } else {
            guard SSL_CTX_set_default_verify_paths(context) == 1 else { throw WebhookTLSError.openSSL("cannot load the system CA store") }
        }
    }

    deinit { SSL_CTX_free(context) }

    /// A TLS session over the connected blocking socket `fd` (its timeouts bound every step), the certificate checked
    /// for `host` (a DNS name, with SNI, or an IP address).
    func connect(fd: Int32, host: String) throws -> WebhookTLSConnection {
        guard let ssl = SSL_new(context) else { throw WebhookTLSError.openSSL("SSL_new failed") }
        let connection = WebhookTLSConnection(ssl: ssl)
        var address = in6_addr()
        let isAddress = inet_pton(AF_INET, host, &address) == 1 || inet_pton(AF_INET6, host, &address) == 1
        if isAddress {
            guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1 else { throw WebhookTLSError.openSSL("bad address \(host)") }
        } else {
            guard SSL_set1_host(ssl, host) == 1 else { throw WebhookTLSError.openSSL("bad host name \(host)") }
            // SNI (SSL_set_tlsext_host_name is a macro over SSL_ctrl).
            _ = host.withCString { SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, Int(TLSEXT_NAMETYPE_host_name), UnsafeMutableRawPointer(mutating: $0)) }
        }
        guard SSL_set_fd(ssl, fd) == 1 else { throw WebhookTLSError.openSSL("SSL_set_fd failed") }
        guard SSL_connect(ssl) == 1 else {
            let verify = SSL_get_verify_result(ssl)
            if verify != X509_V_OK {
                throw WebhookTLSError(description: "certificate of \(host) not trusted: " + String(cString: X509_verify_cert_error_string(verify)))
            }
            throw WebhookTLSError.openSSL("TLS handshake with \(host) failed")
        }
        return connection
    }
}

/// One TLS session; freed with it.
final class WebhookTLSConnection {
    private let ssl: OpaquePointer

    init(ssl: OpaquePointer) { self.ssl = ssl }

    deinit { SSL_free(ssl) }

    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32($0.count)) }
            guard written > 0 else { throw WebhookTLSError.openSSL("TLS write failed") }
            offset += Int(written)
        }
    }

    /// Some bytes, or 0 at the end of the stream.
    func read(into buffer: inout [UInt8]) throws -> Int {
        let count = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
        if count > 0 { return Int(count) }
        if SSL_get_error(ssl, count) == SSL_ERROR_ZERO_RETURN { return 0 }
        throw WebhookTLSError.openSSL("TLS read failed (or no response in time)")
    }

    /// close_notify, best effort.
    func shutdown() { SSL_shutdown(ssl) }
}

struct WebhookTLSError: Error, CustomStringConvertible {
    let description: String

    /// `message` with OpenSSL's queued errors (the queue emptied).
    static func openSSL(_ message: String) -> WebhookTLSError {
        var details: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            details.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return WebhookTLSError(description: details.isEmpty ? message : "\(message): \(details.joined(separator: "; "))")
    }
}

import COpenSSL

public struct TLSError: Error, CustomStringConvertible, Sendable {
    public let description: String

    /// The message with OpenSSL's queued errors appended (and the queue emptied).
    static func openSSL(_ message: String) -> TLSError {
        var details: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            details.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return TLSError(description: details.isEmpty ? message : "\(message): \(details.joined(separator: "; "))")
    }
}

/// A server-side OpenSSL context: certificate chain and key loaded once, TLS 1.2 minimum.
public final class TLSContext: @unchecked Sendable {  // SSL_CTX is only read after setup; OpenSSL locks its own counters
    let context: OpaquePointer

    public init(certificateChainPath: String, privateKeyPath: String) throws(TLSError) {
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw .openSSL("SSL_CTX_new failed") }
        self.context = context
        guard parlor_ssl_ctx_set_min_tls12(context) == 1 else { throw .openSSL("cannot require TLS 1.2") }
        _ = parlor_ssl_ctx_set_modes(context)
        guard SSL_CTX_use_certificate_chain_file(context, certificateChainPath) == 1 else {
            throw .openSSL("cannot load the certificate \(certificateChainPath)")
        }
        guard SSL_CTX_use_PrivateKey_file(context, privateKeyPath, SSL_FILETYPE_PEM) == 1 else {
            throw .openSSL("cannot load the private key \(privateKeyPath)")
        }
        guard SSL_CTX_check_private_key(context) == 1 else { throw .openSSL("the private key does not match the certificate") }
    }

    deinit { SSL_CTX_free(context) }
}

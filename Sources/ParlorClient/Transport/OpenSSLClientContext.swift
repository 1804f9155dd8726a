#if !canImport(Network) && canImport(COpenSSL)
import COpenSSL
import Foundation

/// A client-side OpenSSL context: TLS 1.2 or newer, peer verification on, and the trusted CAs (the system's store,
/// or the ones in `TLSTrust`). Made once per trust setting and shared, since loading the system's store parses a
/// few hundred certificates.
final class OpenSSLClientContext: @unchecked Sendable {  // SSL_CTX is only read after setup; OpenSSL locks its counters
    let context: OpaquePointer

    private init(trust: TLSTrust) throws(ParlorError) {
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw .tls(Self.openSSLErrors("SSL_CTX_new failed")) }
        self.context = context
        guard parlor_ssl_ctx_set_min_tls12(context) == 1 else { throw .tls(Self.openSSLErrors("cannot require TLS 1.2")) }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        if trust.usesSystemStore {
            guard SSL_CTX_set_default_verify_paths(context) == 1 else {
                throw .tls(Self.openSSLErrors("cannot load the system's CA store"))
            }
        }
        if let file = trust.caFile {
            guard FileManager.default.isReadableFile(atPath: file) else { throw .tls("cannot read the CA file \(file)") }
            guard SSL_CTX_load_verify_locations(context, file, nil) == 1 else {
                throw .tls(Self.openSSLErrors("the CA file \(file) holds no PEM certificate"))
            }
        }
        if let pem = trust.caPEM {
            let added = Self.addCertificates(pem, to: SSL_CTX_get_cert_store(context))
            guard added > 0 else { throw .tls("the CA PEM bytes hold no certificate") }
        }
    }

    deinit { SSL_CTX_free(context) }

    /// Every certificate in `pem` added to `store`; how many there were.
    private static func addCertificates(_ pem: [UInt8], to store: OpaquePointer?) -> Int {
        guard !pem.isEmpty, let bio = pem.withUnsafeBytes({ BIO_new_mem_buf($0.baseAddress, Int32(clamping: $0.count)) }) else { return 0 }
        defer { BIO_free(bio) }
        var added = 0
        while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
            if X509_STORE_add_cert(store, certificate) == 1 { added += 1 }
            X509_free(certificate)
        }
        ERR_clear_error()  // the loop ends on "no start line", which is no error here
        return added
    }

    // MARK: Shared contexts

    /// A CA file's identity on disk, so a rewritten file (a regenerated self-signed certificate) loads afresh.
    private struct Key: Hashable {
        let trust: TLSTrust
        let fileStamp: [Int]
    }

    private static let contexts = Locked<[Key: OpenSSLClientContext]>([:])

    static func shared(for trust: TLSTrust) throws(ParlorError) -> OpenSSLClientContext {
        let key = Key(trust: trust, fileStamp: trust.caFile.map(fileStamp) ?? [])
        if let known = contexts.withLock({ $0[key] }) { return known }
        let made = try OpenSSLClientContext(trust: trust)
        return contexts.withLock { known in
            if known.count >= 16 { known.removeAll() }  // bounded: a process rarely trusts more than a few sets of CAs
            if let raced = known[key] { return raced }
            known[key] = made
            return made
        }
    }

    private static func fileStamp(_ path: String) -> [Int] {
        var status = stat()
        guard stat(path, &status) == 0 else { return [] }
        return [Int(status.st_dev), Int(status.st_ino), Int(status.st_size), Int(status.st_mtim.tv_sec), Int(status.st_mtim.tv_nsec)]
    }

    // MARK: Errors

    /// `message` with OpenSSL's queued errors appended (and the queue emptied).
    static func openSSLErrors(_ message: String) -> String {
        var details: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            details.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return details.isEmpty ? message : "\(message): \(details.joined(separator: "; "))"
    }

    /// What a failed certificate verification means for the user, from `SSL_get_verify_result`.
    static func verificationFailure(_ result: Int, host: String, port: Int) -> String {
        let reason = String(cString: X509_verify_cert_error_string(result))
        switch Int32(clamping: result) {
        case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH:
            return "name mismatch: the certificate of \(host):\(port) is not for \(host) (\(reason))"
        case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN,
             X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE,
             X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_CERT_UNTRUSTED:
            return "untrusted certificate: \(host):\(port) presented a certificate no trusted CA vouches for (\(reason)); "
                + "for a self-signed server, trust its certificate (ParlorClientConfiguration.tls, parlor --ca-file)"
        case X509_V_ERR_CERT_HAS_EXPIRED, X509_V_ERR_CERT_NOT_YET_VALID:
            return "certificate not valid now: \(host):\(port) (\(reason))"
        default:
            return "certificate verification of \(host):\(port) failed: \(reason)"
        }
    }
}
#endif

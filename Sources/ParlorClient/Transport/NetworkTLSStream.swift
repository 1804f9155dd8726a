#if canImport(Network)
import Foundation
import Network
import Security

/// TLS on Apple platforms through Network.framework, behind the same blocking `ByteStream` the rest of the client
/// uses: NWConnection's callbacks fill a buffer that `receive` waits on, bounded by its timeout, so a timed-out
/// receive loses nothing. Certificates are checked by Security.framework: the chain against the system's store or the
/// `TLSTrust` anchors only, and the name against the host.
///
/// NOT COMPILED by the project's CI, which runs on Linux only (docs/clients.md says so); Linux uses OpenSSLStream.
final class NetworkTLSStream: ByteStream, @unchecked Sendable {  // every `var` below is guarded by `condition`
    private let connection: NWConnection
    private let condition = NSCondition()
    private var incoming: [UInt8] = []
    private var ended = false
    private var closed = false
    private var failure: ParlorError?
    private var receiving = false
    private var receiveTimeout: Duration?
    private var sendTimeout: Duration?

    private init(connection: NWConnection) {
        self.connection = connection
    }

    static func connect(host: String, port: Int, trust: TLSTrust, timeout: Duration) throws(ParlorError) -> NetworkTLSStream {
        guard let number = UInt16(exactly: port), let endpointPort = NWEndpoint.Port(rawValue: number) else {
            throw .connectionFailed("port \(port) is out of range")
        }
        let anchors = try anchorCertificates(trust)
        let queue = DispatchQueue(label: "ParlorClient TLS \(host):\(port)")
        let verdict = Locked<String?>(nil)
        let tls = NWProtocolTLS.Options()
        sec_protocol_options_set_min_tls_protocol_version(tls.securityProtocolOptions, .TLSv12)
        // A resumed session skips the verify block; every connection is verified against this trust instead.
        sec_protocol_options_set_tls_resumption_enabled(tls.securityProtocolOptions, false)
        sec_protocol_options_set_verify_block(tls.securityProtocolOptions, { _, secTrust, complete in
            let evaluation = sec_trust_copy_ref(secTrust).takeRetainedValue()
            SecTrustSetPolicies(evaluation, SecPolicyCreateSSL(true, host as CFString))
            if let anchors {
                let certificates = anchors.compactMap { SecCertificateCreateWithData(nil, Data($0) as CFData) }
                SecTrustSetAnchorCertificates(evaluation, certificates as CFArray)
                SecTrustSetAnchorCertificatesOnly(evaluation, true)
            }
            var error: CFError?
            let trusted = SecTrustEvaluateWithError(evaluation, &error)
            if !trusted { verdict.withLock { $0 = NetworkTLSStream.verificationFailure(error, host: host, port: port) } }
            complete(trusted)
        }, queue)
        let tcp = NWProtocolTCP.Options()
        tcp.noDelay = true
        tcp.connectionTimeout = max(1, Int(timeout.seconds.rounded(.up)))
        let connection = NWConnection(host: NWEndpoint.Host(host), port: endpointPort, using: NWParameters(tls: tls, tcp: tcp))
        let stream = NetworkTLSStream(connection: connection)
        let outcome = Locked<Result<Void, ParlorError>?>(nil)
        let settled = DispatchSemaphore(value: 0)
        connection.stateUpdateHandler = { [weak stream] state in
            let result: Result<Void, ParlorError>
            switch state {
            case .ready:
                result = .success(())
            case .waiting(let error), .failed(let error):
                result = .failure(NetworkTLSStream.parlorError(error, verdict: verdict.withLock { $0 }, host: host, port: port))
            case .cancelled:
                result = .failure(.connectionLost("the connection was cancelled"))
            default:
                return
            }
            let isFirst = outcome.withLock { known in
                guard known == nil else { return false }
                known = result
                return true
            }
            if isFirst {
                settled.signal()
            } else if case .failure(let error) = result {
                stream?.fail(error)
            }
        }
        connection.start(queue: queue)
        guard settled.wait(timeout: .now() + timeout.seconds) == .success else {
            connection.forceCancel()
            throw .timedOut("the TLS connection to \(host):\(port) was not ready within \(timeout)")
        }
        switch outcome.withLock({ $0 }) {
        case .success?:
            return stream
        case .failure(let error)?:
            connection.forceCancel()
            throw error
        case nil:
            connection.forceCancel()
            throw .connectionFailed("cannot connect to \(host):\(port)")
        }
    }

    /// The DER of every trusted CA, or nil for the system's store; a CA setting without certificates is an error.
    private static func anchorCertificates(_ trust: TLSTrust) throws(ParlorError) -> [[UInt8]]? {
        guard !trust.usesSystemStore else { return nil }
        var certificates: [[UInt8]] = []
        if let file = trust.caFile {
            guard let contents = FileManager.default.contents(atPath: file) else { throw .tls("cannot read the CA file \(file)") }
            let found = PEMCertificates.der(in: Array(contents))
            guard !found.isEmpty else { throw .tls("the CA file \(file) holds no PEM certificate") }
            certificates += found
        }
        if let pem = trust.caPEM {
            let found = PEMCertificates.der(in: pem)
            guard !found.isEmpty else { throw .tls("the CA PEM bytes hold no certificate") }
            certificates += found
        }
        for der in certificates where SecCertificateCreateWithData(nil, Data(der) as CFData) == nil {
            throw .tls("a CA certificate is not a valid X.509 certificate")
        }
        return certificates
    }

    private static func verificationFailure(_ error: CFError?, host: String, port: Int) -> String {
        guard let error else { return "certificate verification of \(host):\(port) failed" }
        let reason = CFErrorCopyDescription(error) as String
        if CFErrorGetCode(error) == Int(errSecHostNameMismatch) {
            return "name mismatch: the certificate of \(host):\(port) is not for \(host) (\(reason))"
        }
        return "untrusted certificate: \(host):\(port) presented a certificate no trusted CA vouches for (\(reason)); "
            + "for a self-signed server, trust its certificate (ParlorClientConfiguration.tls, parlor --ca-file)"
    }

    private static func parlorError(_ error: NWError, verdict: String?, host: String, port: Int) -> ParlorError {
        if let verdict { return .tls(verdict) }
        switch error {
        case .tls:
            return .tls("TLS handshake with \(host):\(port) failed: \(error) (is the server serving https, and TLS 1.2 or newer?)")
        case .dns:
            return .connectionFailed("cannot resolve \(host): \(error)")
        default:
            return .connectionFailed("cannot connect to \(host):\(port): \(error)")
        }
    }

    // MARK: ByteStream

    func setReceiveTimeout(_ timeout: Duration?) {
        condition.lock()
        receiveTimeout = timeout
        condition.unlock()
    }

    func setSendTimeout(_ timeout: Duration?) {
        condition.lock()
        sendTimeout = timeout
        condition.unlock()
    }

    func send(_ bytes: [UInt8]) throws(ParlorError) {
        condition.lock()
        let timeout = sendTimeout, isClosed = closed
        condition.unlock()
        guard !isClosed else { throw .connectionLost("the connection is closed") }
        let done = DispatchSemaphore(value: 0)
        let outcome = Locked<String?>(nil)
        connection.send(content: Data(bytes), completion: .contentProcessed { error in
            if let error { outcome.withLock { $0 = "\(error)" } }
            done.signal()
        })
        if let timeout {
            guard done.wait(timeout: .now() + timeout.seconds) == .success else { throw .connectionLost("send timed out") }
        } else {
            done.wait()
        }
        if let failed = outcome.withLock({ $0 }) { throw .connectionLost("send failed: \(failed)") }
    }

    func receive(into chunk: inout [UInt8]) throws(ParlorError) -> ReceiveResult {
        condition.lock()
        defer { condition.unlock() }
        let deadline = receiveTimeout.map { Date(timeIntervalSinceNow: $0.seconds) }
        while incoming.isEmpty && !ended && failure == nil {
            if !receiving { requestMore() }
            if let deadline {
                if !condition.wait(until: deadline), incoming.isEmpty, !ended, failure == nil { return .timedOut }
            } else {
                condition.wait()
            }
        }
        if !incoming.isEmpty {
            let count = min(chunk.count, incoming.count)
            chunk.replaceSubrange(0..<count, with: incoming[0..<count])
            incoming.removeFirst(count)
            return .bytes(count)
        }
        if let failure { throw failure }
        return .endOfStream
    }

    /// One NWConnection receive at a time; its data waits in `incoming`. Called with `condition` locked.
    private func requestMore() {
        receiving = true
        connection.receive(minimumIncompleteLength: 1, maximumLength: 65536) { [weak self] data, _, isComplete, error in
            guard let self else { return }
            self.condition.lock()
            self.receiving = false
            if let data { self.incoming += data }
            if let error, case .tls = error {
                if self.failure == nil && !self.ended { self.failure = .tls("TLS error on an open connection: \(error)") }
            } else if error != nil || isComplete {
                self.ended = true  // a reset or the server's close: the end of the stream, as on a plain socket
            }
            self.condition.broadcast()
            self.condition.unlock()
        }
    }

    /// A failure the connection reported after it was ready.
    private func fail(_ error: ParlorError) {
        condition.lock()
        if failure == nil && !ended { failure = error }
        condition.broadcast()
        condition.unlock()
    }

    /// As a network failure: no close_notify, the reader sees the end of the stream.
    func shutdown() {
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
        connection.forceCancel()
    }

    /// A graceful close (close_notify, then FIN); later sends fail.
    func close() {
        condition.lock()
        ended = true
        closed = true
        condition.broadcast()
        condition.unlock()
        connection.cancel()
    }

    deinit {
        connection.forceCancel()
    }
}
#endif

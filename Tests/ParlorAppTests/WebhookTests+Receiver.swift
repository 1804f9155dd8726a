#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import Foundation

/// A minimal HTTP (or HTTPS) receiver on 127.0.0.1: records each POST, answers 500 to the first `failFirst`, then
/// 200; or, stalling, reads each request and never answers (the connection held open until `stop`).
final class WebhookReceiver: @unchecked Sendable {  // all mutable state is guarded by `condition`
    struct Request {
        let path: String
        let event: String
        let signature: String
        let body: [UInt8]
        /// The payload's `id` (the idempotency key).
        var id: String? { (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?["id"] as? String }
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]) ?? [:] }
    }
    let port: Int
    private let fd: Int32
    private let stalls: Bool
    private let tls: OpaquePointer?
    private let condition = NSCondition()
    private var requests: [Request] = []
    private var attemptsSeen: [Request] = []
    private var failuresLeft: Int
    private(set) var failedAttempts = 0
    private var refusedHandshakes = 0
    private var held: [Int32] = []
    private var running = true

    /// `tls`: serve HTTPS with this PEM certificate and key.
    init(failFirst: Int, stalls: Bool = false, tls files: (certificate: String, key: String)? = nil) throws {
        failuresLeft = failFirst
        self.stalls = stalls
        if let files {
            guard let context = SSL_CTX_new(TLS_server_method()), SSL_CTX_use_certificate_chain_file(context, files.certificate) == 1,
                  SSL_CTX_use_PrivateKey_file(context, files.key, SSL_FILETYPE_PEM) == 1 else { throw TestFailure("receiver TLS setup failed") }
            tls = context
        } else {
            tls = nil
        }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound, listen(fd, 16) == 0 else { throw TestFailure("receiver could not listen") }
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in self.acceptLoop() }
        thread.start()
    }

    func stop() {
        condition.lock()
        running = false
        for client in held { close(client) }
        held = []
        condition.unlock()
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }

    /// From now on every request gets 200.
    func acceptAll() {
        condition.lock(); failuresLeft = 0; condition.unlock()
    }

    /// Waits (bounded) until `count` requests were accepted with 200.
    func waitFor(count: Int, timeout: Double = 30) throws -> [Request] {
        try wait(timeout: timeout, "\(count) webhooks accepted") { $0.requests.count >= count ? $0.requests : nil }
    }

    /// Waits (bounded) until `count` requests arrived, answered or not.
    func waitForAttempts(count: Int, timeout: Double = 10) throws -> [Request] {
        try wait(timeout: timeout, "\(count) webhook attempts") { $0.attemptsSeen.count >= count ? $0.attemptsSeen : nil }
    }

    /// Waits (bounded) until `count` TLS handshakes failed.
    func waitForRefusedHandshakes(count: Int, timeout: Double = 10) throws {
        _ = try wait(timeout: timeout, "\(count) refused handshakes") { $0.refusedHandshakes >= count ? true : nil }
    }

    var accepted: [Request] { condition.lock(); defer { condition.unlock() }; return requests }

    private func wait<T>(timeout: Double, _ what: String, _ done: (WebhookReceiver) -> T?) throws -> T {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let result = done(self) { return result }
            guard condition.wait(until: deadline) else {
                throw TestFailure("waited for \(what): \(requests.count) accepted, \(attemptsSeen.count) attempts, \(refusedHandshakes) refused handshakes")
            }
        }
    }

    private func acceptLoop() {
        while true {
            let client = accept(fd, nil, nil)
            guard client >= 0 else { return }
            var tv = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            var session: OpaquePointer?
            if let tls {
                session = SSL_new(tls)
                SSL_set_fd(session, client)
                guard SSL_accept(session) == 1 else {
                    SSL_free(session)
                    close(client)
                    condition.lock(); refusedHandshakes += 1; condition.broadcast(); condition.unlock()
                    continue
                }
            }
            let keep = handle(client, session)
            if let session { SSL_free(session) }
            if keep {
                condition.lock()
                if running { held.append(client) } else { close(client) }
                condition.unlock()
            } else {
                close(client)
            }
        }
    }

    /// Reads one request and answers it; true when stalling (the connection is kept, unanswered).
    private func handle(_ client: Int32, _ session: OpaquePointer?) -> Bool {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            if let end = data.firstRange(of: [13, 10, 13, 10]) {
                let head = String(decoding: data[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
                var headers: [String: String] = [:]
                for line in head.dropFirst() {
                    if let colon = line.firstIndex(of: ":") {
                        headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                    }
                }
                let length = Int(headers["content-length"] ?? "0") ?? 0
                if data.count >= end.upperBound + length {
                    let request = Request(path: head[0].split(separator: " ").dropFirst().first.map(String.init) ?? "",
                                          event: headers["x-parlor-event"] ?? "", signature: headers["x-parlor-signature"] ?? "",
                                          body: Array(data[end.upperBound..<(end.upperBound + length)]))
                    condition.lock()
                    attemptsSeen.append(request)
                    let fail = !stalls && failuresLeft > 0
                    if fail { failuresLeft -= 1; failedAttempts += 1 } else if !stalls { requests.append(request) }
                    condition.broadcast()
                    condition.unlock()
                    if stalls { return true }
                    let reply = Array((fail ? "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n" : "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").utf8)
                    _ = reply.withUnsafeBytes { bytes in
                        session.map { Int(SSL_write($0, bytes.baseAddress, Int32(bytes.count))) }
                            ?? send(client, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
                    }
                    return false
                }
            }
            let count = chunk.withUnsafeMutableBytes { buffer in
                session.map { Int(SSL_read($0, buffer.baseAddress, Int32(buffer.count))) } ?? recv(client, buffer.baseAddress, buffer.count, 0)
            }
            guard count > 0 else { return false }
            data += chunk[0..<count]
        }
    }
}

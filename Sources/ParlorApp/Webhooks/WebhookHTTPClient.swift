#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorLoop

/// A blocking HTTP/1.1 POST for webhook delivery threads: one request per connection, every step under a timeout;
/// https:// through `WebhookTLS` (verified).
enum WebhookHTTPClient {
    struct Target: Sendable {
        let host: String
        let port: Int
        let path: String
        let usesTLS: Bool

        init?(_ url: String) {
            guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
                  scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty else {
                return nil
            }
            usesTLS = scheme == "https"
            self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
            port = components.port ?? (usesTLS ? 443 : 80)
            path = (components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath)
                + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
        }

        /// The Host header: a literal IPv6 address in brackets.
        var authority: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Sends the POST and returns the response status. `socket` holds the connected descriptor while the request
    /// runs (-1 otherwise), and the descriptor is closed under its lock: a `shutdown` under that lock ends a request
    /// in progress and can never reach a descriptor reused since.
    static func post(_ target: Target, tls: WebhookTLS, body: [UInt8], headers: [(String, String)], timeout: Double,
                     socket: Locked<Int32>) throws -> Int {
        let fd = try connect(to: target, timeout: timeout)
        socket.withLock { $0 = fd }
        defer {
            socket.withLock { held in
                held = -1
                close(fd)
            }
        }
        var head = "POST \(target.path) HTTP/1.1\r\nHost: \(target.authority)\r\nConnection: close\r\n"
        head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\nUser-Agent: parlor-webhooks\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        let request = Array((head + "\r\n").utf8) + body
        let session = target.usesTLS ? try tls.connect(fd: fd, host: target.host) : nil
        defer { session?.shutdown() }
        if let session {
            try session.write(request)
        } else {
            var offset = 0
            while offset < request.count {
                let sent = request[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard sent > 0 else { throw Failure(description: "send failed: \(String(cString: strerror(errno)))") }
                offset += sent
            }
        }
        // The status line is all we need.
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while !response.contains(10) {
            let count = try session?.read(into: &chunk) ?? chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw Failure(description: count == 0 ? "connection closed before a response" : "no response in time") }
            guard response.count < 8192 else { throw Failure(description: "no status line") }
            response += chunk[0..<count]
        }
        let statusLine = String(decoding: response.prefix { $0 != 13 && $0 != 10 }, as: UTF8.self).split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure(description: "malformed response") }
        return status
    }

    /// A blocking TCP socket to `target` with every step bounded by `timeout` (also used by `RecordingProxy`).
    static func connect(to target: Target, timeout: Double) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var results: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(target.host, String(target.port), &hints, &results) == 0, let first = results else {
            throw Failure(description: "cannot resolve \(target.host)")
        }
        defer { freeaddrinfo(results) }
        var lastError = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), info.pointee.ai_protocol)
            guard fd >= 0 else { continue }
            var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return fd }
            lastError = String(cString: strerror(errno))
            close(fd)
        }
        throw Failure(description: "cannot connect to \(target.host):\(target.port): \(lastError)")
    }
}

#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import ParlorCodec
import ParlorHTTP
import ParlorLoop

/// How a node proves to another that a download request comes from a node of the same cluster, not a user: an
/// `X-Parlor-Node-Auth: <unix seconds>.<hex HMAC-SHA256>` over the method, the path and that time, under the secret
/// every node on the database shares (`server_secrets`, "node-proxy"). Accepted within ±60 s of the receiver's clock.
struct NodeProxyAuth: Sendable {
    static let header = "X-Parlor-Node-Auth"
    static let windowSeconds: Int64 = 60
    let secret: [UInt8]

    func sign(method: String, path: String, at seconds: Int64) -> String {
        "\(seconds).\(Hex.encode(mac(method: method, path: path, seconds: seconds)))"
    }

    /// True when `value` is this cluster's signature of the request, made within the window around `now`.
    func verify(_ value: String, method: String, path: String, now: Int64) -> Bool {
        let parts = value.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, let seconds = Int64(parts[0]), abs(now - seconds) <= Self.windowSeconds else { return false }
        let given = Array(parts[1].utf8), expected = Array(Hex.encode(mac(method: method, path: path, seconds: seconds)).utf8)
        guard given.count == expected.count else { return false }
        // Constant time: how much of a guess matched must not show in the answer's timing.
        return zip(given, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    private func mac(method: String, path: String, seconds: Int64) -> [UInt8] {
        hmacSHA256(Array("\(method)\n\(path)\n\(seconds)".utf8), key: secret)
    }

    static var nowSeconds: Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec)
    }
}

/// A download of a recording's file held by another live node: a blocking HTTP/1.1 GET to it on a download thread,
/// signed with `NodeProxyAuth`, and its body streamed on to our client as it arrives (each piece read once the client
/// took the previous one). A node that does not answer is a 502 naming it.
enum RecordingProxy {
    static let timeoutSeconds = 5.0
    static let maxHeadBytes = 16 * 1024
    /// An answer other than the file (a 404, a 416) is passed on whole; it is a small JSON problem.
    static let maxErrorBodyBytes = 64 * 1024
    /// Headers of the holder's answer passed on to the client.
    static let passedHeaders = ["Content-Type", "Content-Disposition", "Content-Range", "Accept-Ranges", "X-Content-Type-Options"]

    /// `method` is GET, or HEAD (asked of the holder as HEAD: the head alone, no file read).
    static func fetch(method: String, path: String, range: String?, from url: String, node: String, auth: NodeProxyAuth) throws -> RouteResult {
        let method = method == "HEAD" ? "HEAD" : "GET"
        func unreachable(_ why: String) -> HTTPError {
            HTTPError(.recordingNodeUnreachable, title: "Bad Gateway", detail: "the files are on node \(node), which did not answer: \(why)")
        }
        guard let target = WebhookHTTPClient.Target(url), !target.usesTLS else { throw unreachable("its address \(url) is not http://") }
        let fd: Int32
        do {
            fd = try WebhookHTTPClient.connect(to: target, timeout: timeoutSeconds)
        } catch {
            throw unreachable("\(error)")
        }
        let source = UpstreamSource(fd: fd)
        var request = "\(method) \(path) HTTP/1.1\r\nHost: \(target.authority)\r\nConnection: close\r\nUser-Agent: parlor-node\r\n"
        request += "\(NodeProxyAuth.header): \(auth.sign(method: method, path: path, at: NodeProxyAuth.nowSeconds))\r\n"
        if let range { request += "Range: \(range)\r\n" }
        guard source.sendAll(Array((request + "\r\n").utf8)) else { throw unreachable("the request could not be sent") }
        guard let head = source.readHead(limit: maxHeadBytes) else { throw unreachable("no response in time") }
        guard let length = head.headers["Content-Length"].flatMap({ Int($0) }), length >= 0 else {
            throw unreachable("its response had no Content-Length")
        }
        var headers = HTTPHeaders()
        for name in passedHeaders { if let value = head.headers[name] { headers.add(name, value) } }
        guard head.status == 200 || head.status == 206 else {
            guard length <= maxErrorBodyBytes, let body = method == "HEAD" ? [] : source.readExactly(length) else { throw unreachable("a malformed error response") }
            return .response(HTTPResponse(status: head.status, headers: headers, body: body))
        }
        return .stream(RecordingDownload.response(status: head.status, headers: headers, length: length, source: source))
    }
}

/// The holder's connection: the bytes already read past its response's head first, then the socket (each read under
/// the connect timeout). Closed when released.
final class UpstreamSource: DownloadSource, @unchecked Sendable {  // `pending` is only touched holding `lock`
    private let fd: Int32
    private let lock = Locked(())
    private var pending: [UInt8] = []

    init(fd: Int32) { self.fd = fd }

    deinit { close(fd) }

    func sendAll(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// The status and headers, nil when the connection ends or stalls first or the head is malformed.
    func readHead(limit: Int) -> (status: Int, headers: HTTPHeaders)? {
        lock.withLock { _ in
            var buffer: [UInt8] = []
            while true {
                if let end = buffer.firstRange(of: [13, 10, 13, 10]) {
                    pending = Array(buffer[end.upperBound...])
                    let lines = String(decoding: buffer[..<end.lowerBound], as: UTF8.self).split(separator: "\r\n")
                    guard let statusLine = lines.first, case let words = statusLine.split(separator: " "), words.count >= 2,
                          words[0].hasPrefix("HTTP/1."), let status = Int(words[1]) else { return nil }
                    var headers = HTTPHeaders()
                    for line in lines.dropFirst() {
                        guard let colon = line.firstIndex(of: ":") else { return nil }
                        headers.add(String(line[..<colon]), line[line.index(after: colon)...].trimmingSpaces)
                    }
                    return (status, headers)
                }
                guard buffer.count < limit, let bytes = receive(upTo: 16 * 1024), !bytes.isEmpty else { return nil }
                buffer += bytes
            }
        }
    }

    func readExactly(_ count: Int) -> [UInt8]? {
        var body: [UInt8] = []
        while body.count < count {
            guard let bytes = try? read(upTo: count - body.count), !bytes.isEmpty else { return nil }
            body += bytes
        }
        return body
    }

    func read(upTo limit: Int) throws -> [UInt8] {
        try lock.withLock { _ in
            if !pending.isEmpty {
                let taken = Array(pending.prefix(limit))
                pending.removeFirst(taken.count)
                return taken
            }
            guard let bytes = receive(upTo: limit) else { throw SystemError("read from the node holding the files", errno: errno) }
            return bytes
        }
    }

    /// nil: an error or the timeout; empty: the end.
    private func receive(upTo limit: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: limit)
        let count = bytes.withUnsafeMutableBytes { recv(fd, $0.baseAddress, limit, 0) }
        guard count >= 0 else { return nil }
        bytes.removeLast(limit - count)
        return bytes
    }
}

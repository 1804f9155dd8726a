#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorCodec
import ParlorLoop

/// A blocking HTTP/1.1 keep-alive client for the setup requests (POST /auth, POST /rooms); the measured traffic
/// goes through the workers' event loops instead.
final class SetupClient {
    let host: String
    let port: Int
    private var fd: Int32 = -1
    private var pending: [UInt8] = []

    init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    deinit { if fd >= 0 { close(fd) } }

    struct Response {
        var status: Int
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Sends one request and reads its response; reconnects once if the kept-alive connection was closed.
    func request(_ method: String, _ path: String, body: String? = nil, bearer: String? = nil) -> Response? {
        for _ in 0..<2 {
            if fd < 0 {
                guard let socket = Self.connect(host: host, port: port) else { return nil }
                fd = socket
                pending.removeAll()
            }
            var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\n"
            if let bearer { head += "Authorization: Bearer \(bearer)\r\n" }
            if let body { head += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
            head += "\r\n"
            if let body { head += body }
            if writeAll(Array(head.utf8)), let response = readResponse() { return response }
            close(fd)
            fd = -1
        }
        return nil
    }

    /// A blocking connected socket: connect gives up after 5 s, a read after 10 s.
    private static func connect(host: String, port: Int) -> Int32? {
        try? SocketAddress(host: host, port: port)?.connectBlocking(sendTimeout: .seconds(5), receiveTimeout: .seconds(10))
    }

    /// Writes all of `bytes` or returns false.
    private func writeAll(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }

    private func readResponse() -> Response? {
        var buffer = [UInt8](repeating: 0, count: 16384)
        func fill() -> Bool {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return false }
            pending.append(contentsOf: buffer[0..<count])
            return true
        }
        while true {
            if let end = HTTPBytes.headEnd(pending) {
                let head = String(decoding: pending[0..<end], as: UTF8.self)
                guard let status = HTTPBytes.status(head) else { return nil }
                let length = HTTPBytes.contentLength(head) ?? 0
                let total = end + 4 + length
                while pending.count < total { guard fill() else { return nil } }
                let body = Array(pending[(end + 4)..<total])
                pending.removeFirst(total)
                return Response(status: status, body: body)
            }
            guard fill() else { return nil }
        }
    }
}

enum HTTPBytes {
    /// Index of the "\r\n\r\n" that ends a head.
    static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    static func status(_ head: String) -> Int? {
        let parts = head.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2 else { return nil }
        return Int(parts[1])
    }

    static func contentLength(_ head: String) -> Int? {
        for line in head.split(separator: "\r\n") {
            let lower = line.lowercased()
            if lower.hasPrefix("content-length:") {
                return Int(lower.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
            }
        }
        return nil
    }
}

/// Minimal field extraction from the server's compact JSON: enough to read ids and tokens without a JSON parser.
enum JSONScan {
    /// The string value of the first `"key":"…"` in `text`.
    static func string(_ key: String, in text: String) -> String? {
        guard let range = text.range(of: "\"\(key)\":\"") else { return nil }
        let rest = text[range.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end])
    }
}

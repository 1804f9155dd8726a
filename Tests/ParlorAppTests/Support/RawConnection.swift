#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorCodec

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A blocking TCP client for tests: real socket to 127.0.0.1, every read bounded by a timeout so no test can hang.
final class RawConnection {
    let fd: Int32
    private(set) var buffer: [UInt8] = []

    /// `source` binds the client end to another loopback address (127.0.0.2, …) to play a second client address.
    /// `receiveBufferBytes`: SO_RCVBUF set before connecting, so the window offered stays that small (a client
    /// that reads nothing then holds next to nothing of what the server sends it: the server holds the rest).
    init(port: Int, timeout: Double = 5, source: String? = nil, receiveBufferBytes: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket failed") }
        if var bytes = receiveBufferBytes {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, socklen_t(MemoryLayout<Int32>.size))
        }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { close(fd); throw TestFailure("bind to \(source) failed: errno \(errno)") }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { close(fd); throw TestFailure("connect to port \(port) failed: errno \(errno)") }
        setTimeout(timeout)
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    func setTimeout(_ seconds: Double) {
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw TestFailure("send failed: errno \(errno)") }
            offset += sent
        }
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Sends one byte per write, the way a slow or hostile client might.
    func sendByteByByte(_ bytes: [UInt8]) throws {
        for byte in bytes { try send([byte]) }
    }

    /// Reads more bytes into the buffer; returns false at end of stream. Throws on timeout.
    @discardableResult
    func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count > 0 {
            buffer += chunk[0..<count]
            return true
        }
        if count == 0 { return false }
        if errno == EAGAIN || errno == EWOULDBLOCK { throw TestFailure("timed out waiting for data") }
        if errno == ECONNRESET { return false }
        throw TestFailure("recv failed: errno \(errno)")
    }

    func take(_ count: Int) -> [UInt8] {
        let taken = Array(buffer.prefix(count))
        buffer.removeFirst(min(count, buffer.count))
        return taken
    }

    /// True when the server closes the connection (EOF or reset) within the timeout.
    func waitForClose() throws -> Bool {
        while true {
            buffer.removeAll()
            if try !fill() { return true }
        }
    }

    /// Reads one HTTP response (Content-Length framed).
    func readResponse(headOnly: Bool = false) throws -> TestResponse {
        while true {
            if let end = buffer.firstRange(of: [13, 10, 13, 10]) {
                let head = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
                var lines = head.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst().split(separator: " ")
                guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw TestFailure("bad status line: \(head)") }
                var headers: [(String, String)] = []
                for line in lines {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
                }
                let length = headOnly || status == 101 || status == 204 ? 0
                    : Int(headers.first { $0.0.lowercased() == "content-length" }?.1 ?? "0") ?? 0
                let bodyStart = end.upperBound
                while buffer.count < bodyStart + length {
                    guard try fill() else { throw TestFailure("connection closed inside a body") }
                }
                let body = Array(buffer[bodyStart..<(bodyStart + length)])
                buffer.removeFirst(bodyStart + length)
                return TestResponse(status: status, headers: headers, body: body)
            }
            guard try fill() else { throw TestFailure("connection closed before a response (buffer: \(buffer.count) bytes)") }
        }
    }
}

struct TestResponse {
    let status: Int
    let headers: [(String, String)]
    let body: [UInt8]

    func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
    var text: String { String(decoding: body, as: UTF8.self) }
    var json: Any? { try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]) }
    var object: [String: Any] { json as? [String: Any] ?? [:] }
    var array: [[String: Any]] { json as? [[String: Any]] ?? [] }
    var errorCode: String? { object["code"] as? String }
}

extension RawConnection {
    /// One request on a fresh `Connection: close` connection to `port` from `source` (a loopback address standing
    /// for a client address), with a JSON body when `json` is given.
    static func oneRequest(_ port: Int, _ method: String, _ path: String, json: String? = nil, headers: [String: String] = [:],
                           from source: String = "127.0.0.1") throws -> TestResponse {
        let connection = try RawConnection(port: port, source: source)
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let json {
            text += "Content-Type: application/json\r\nContent-Length: \(json.utf8.count)\r\n\r\n\(json)"
        } else {
            text += "\r\n"
        }
        try connection.send(text)
        return try connection.readResponse(headOnly: method == "HEAD")
    }
}

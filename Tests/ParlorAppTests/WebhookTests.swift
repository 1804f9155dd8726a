#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ParlorApp
@testable import ParlorStore

/// Webhooks reach a receiver on 127.0.0.1 in order, signed, and are retried when it fails.
@Suite struct WebhookTests {
    @Test func roomAndMemberEventsArriveSignedInOrderWithRetries() throws {
        let receiver = try WebhookReceiver(failFirst: 2)
        defer { receiver.stop() }
        let secret = "webhook-secret-for-tests"
        try withServer({
            $0.webhookURLs = ["http://127.0.0.1:\(receiver.port)/hooks?source=parlor"]
            $0.webhookSecret = secret
            $0.webhookInitialBackoff = .milliseconds(20)
        }) { app in
            let members = try TwoMembers(app)
            let (room, bob) = (members.room, members.bob)
            _ = try bob.call("conversation:leave", ["cid": room])

            let received = try receiver.waitFor(count: 4)
            #expect(received.map(\.event) == ["room_started", "member_joined", "member_joined", "member_left"])
            #expect(receiver.failedAttempts == 2, "the first deliveries were refused and had to be retried")
            for request in received {
                #expect(request.path == "/hooks?source=parlor")
                #expect(request.signature == "sha256=" + Self.hmacSHA256(key: Array(secret.utf8), message: request.body).map { String(format: "%02x", $0) }.joined())
                let json = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
                #expect((json["room"] as? [String: Any])?["id"] as? String == room)
            }
            let left = try #require(try JSONSerialization.jsonObject(with: Data(received[3].body)) as? [String: Any])
            #expect(left["reason"] as? String == "left")
            #expect(((left["member"] as? [String: Any])?["user"] as? [String: Any])?["name"] as? String == "bob")
            #expect(left["room_event_id"] as? Int == 3)
        }
    }

    /// Issue 17: without --webhook-secret, webhooks were signed with the JWT secret, so every receiver could mint
    /// tokens. Now a secret of their own is generated and kept in the data directory (0600).
    @Test func webhooksAreSignedWithAGeneratedSecretNotTheJWTSecret() throws {
        let receiver = try WebhookReceiver(failFirst: 0)
        defer { receiver.stop() }
        try withTemporaryDirectory { directory in
            let jwtSecret = "parlor-test-secret-parlor-test-secret"
            try withServer({
                $0.databasePath = nil
                $0.dataDirectory = directory
                $0.jwtSecret = jwtSecret
                $0.webhookURLs = ["http://127.0.0.1:\(receiver.port)/hooks"]
            }) { app in
                _ = try createRoom(app)
                let request = try #require(try receiver.waitFor(count: 1).first)
                let path = directory + "/webhook-secret"
                let text = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
                let generated = stride(from: 0, to: text.count, by: 2).compactMap { offset -> UInt8? in
                    let start = text.index(text.startIndex, offsetBy: offset)
                    return UInt8(text[start..<text.index(start, offsetBy: 2)], radix: 16)
                }
                #expect(generated.count == 32)
                let mode = try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
                #expect(mode & 0o777 == 0o600)
                func signature(_ key: [UInt8]) -> String {
                    "sha256=" + Self.hmacSHA256(key: key, message: request.body).map { String(format: "%02x", $0) }.joined()
                }
                #expect(request.signature != signature(Array(jwtSecret.utf8)), "signed with the JWT secret")
                #expect(request.signature == signature(generated))
            }
        }
    }

    /// RFC 2104 over the store's own SHA-256: independent of the OpenSSL HMAC the server signs with.
    static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var block = key.count > 64 ? SHA256.digest(of: key) : key
        block += [UInt8](repeating: 0, count: 64 - block.count)
        let inner = SHA256.digest(of: block.map { $0 ^ 0x36 } + message)
        return SHA256.digest(of: block.map { $0 ^ 0x5C } + inner)
    }
}

/// A minimal HTTP receiver on 127.0.0.1: records each POST, answers 500 to the first `failFirst`, then 200.
final class WebhookReceiver: @unchecked Sendable {  // all mutable state is guarded by `condition`
    struct Request { let path: String; let event: String; let signature: String; let body: [UInt8] }
    let port: Int
    private let fd: Int32
    private let condition = NSCondition()
    private var requests: [Request] = []
    private var failuresLeft: Int
    private(set) var failedAttempts = 0
    private var running = true

    init(failFirst: Int) throws {
        failuresLeft = failFirst
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
        condition.lock(); running = false; condition.unlock()
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }

    /// Waits (bounded) until `count` requests were accepted with 200.
    func waitFor(count: Int, timeout: Double = 10) throws -> [Request] {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while requests.count < count {
            guard condition.wait(until: deadline) else { throw TestFailure("only \(requests.count) of \(count) webhooks arrived") }
        }
        return requests
    }

    private func acceptLoop() {
        while true {
            let client = accept(fd, nil, nil)
            guard client >= 0 else { return }
            handle(client)
            close(client)
        }
    }

    private func handle(_ client: Int32) {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        var tv = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
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
                    let fail = failuresLeft > 0
                    if fail { failuresLeft -= 1; failedAttempts += 1 } else { requests.append(request) }
                    condition.broadcast()
                    condition.unlock()
                    let reply = fail ? "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n" : "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
                    _ = Array(reply.utf8).withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    return
                }
            }
            let count = chunk.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            data += chunk[0..<count]
        }
    }
}
